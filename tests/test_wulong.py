"""兰溪乌龙 ``wulong``: combinations with wild jokers, the 3s, 报牌, turns, scoring, first
lead, joker picks, custom deals and the PettingZoo face (the registry-wide suites in
``test_conformance.py`` / ``test_bad_input.py`` run on it too).

Every expected value below is derived by hand from the rules page (docs/rules/wulong.md), restated
here so the tests do not read the page:

* 108 cards (two decks, jokers ``BB RR``), 25 to each of 4 seats, 8 unused; singles
  ``R`` > ``B`` > 2 > A > ... > 3;
* a joker played with at least one natural card stands for any natural rank the combination
  needs (``R[2]222`` = ``2222``); jokers are also themselves: singles, pairs ``BB`` / ``RR``
  (``BR`` is no pair), the carried pair of a trio or trio chain, ``BBRR`` above every bomb;
  three jokers alone are no combination; a joker is never in a chain as itself;
* 3s only inside straights, pair chains and trio chains (a wild may be the 3 there); a hand of
  only 3s has failed; every player failed before anyone out -> void deal;
* trio + pair (never + single), straight >= 5 within 3..A, pair chain >= 3, trio chain >= 2
  alone or with as many pairs of distinct other ranks; bombs >= 4 of a rank, more cards
  beat fewer, then higher rank; equal never beats equal;
* first lead: going round from the seat after the dealer, the first holder of ♠3, else ♣3,
  ♥3, ♦3, ♠4, ... (``first_lead="C3"``: ♣3, ♠3, ♥3, ♦3, ♣4, ...);
* 报牌: at the start of one's turn, <= 10 cards, nobody out yet; the hand is public; every
  play holds the top card (all of its copies when holding >= 4 of it); passing stays allowed;
* 头家 = first out; each declarer who is not the 头家 pays him 2; otherwise the 末家 (the
  earliest 3-failure, else the last active player) pays 1, or 2 when the 头家 declared.

The engine's own decisions (documented in ``cardenvs.games.wulong``): a play is an effective
row plus, when the hand has several ways to make it, joker picks ``B[r]`` / ``R[r]`` /
``done`` in canonical order (ranks ascending, small jokers first).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import cardenvs
from cardenvs import legal_moves, wulong_v0
from cardenvs.core.cards import NSLOT
from cardenvs.core.combos import BOMB, ROCKET
from cardenvs.core.reference import beats, classify, submultisets
from cardenvs.core.state import CUR, LAST_ROW, PHASE, hand_off
from cardenvs.core.wild import classify_wild, gen_legal_wild
from cardenvs.games import wulong as W
from helpers import assert_bad_deal_kept_out

ORDER = "3456789TJQKA2BR"
SUITS = "SHCD"


def lm(hand, prev=None, **options):
    return legal_moves("wulong", hand, prev, **options)


@pytest.fixture(scope="module")
def g() -> W.Wulong:
    return cardenvs.make_game("wulong")


def position(game, hands, to_move=0, **kw) -> np.ndarray:
    s = game.new_state()
    game.set_position(s, hands, to_move, **kw)
    return s


def legal_strings(game, s) -> list[str]:
    out = np.empty(game.n_actions, np.int64)
    k = game.legal(s, out)
    return [game.action_to_string(int(a)) for a in out[:k]]


def act(game, s, text: str) -> None:
    a = game.string_to_action(text)
    assert game.is_legal(s, a), (text, legal_strings(game, s))
    game.step(s, a)


def hand_of(game, s, seat) -> str:
    return game.deck.format(s[hand_off(seat):hand_off(seat) + 16])


# -- combinations ------------------------------------------------------------------------------


def test_table_size_and_blocks(g):
    # by hand: singles 14 (4..2, B, R), pairs 14 (+BB, RR), trios 12, trio + pair 12 x 13,
    # straights sum(13 - L, L = 5..12) = 36, pair chains 55, trio chains (L = 2..8) 56,
    # trio chains + pairs: kickers from the 14 pair ranks 4..2 B R outside the chain
    # (L = 2..5: 738 + 1705 + 2010 + 1134 = 5587), bombs 9 sizes (4..12) x 12 ranks, BBRR
    fams = {}
    for p in g.table.plays:
        fams[p.family] = fams.get(p.family, 0) + 1
    assert [fams[f] for f in sorted(fams)] == [14, 14, 12, 156, 36, 55, 56, 5587, 108, 1]
    assert len(g.table) == 6039
    assert g.blocks == {"play": (0, 6039), "pass": (6039, 6040), "declare": (6040, 6041),
                        "pick": (6041, 6068)}
    assert g.n_actions == 6068
    # two wilds: bombs up to 10 cards (7 sizes); none: up to 8 (5 sizes); fewer picks
    assert cardenvs.make_game("wulong", wild_jokers="big_only").n_actions == 6015 + 2 + 14
    assert cardenvs.make_game("wulong", wild_jokers="none").n_actions == 5991 + 2


def test_threes_only_inside_chains():
    assert lm("33") == []  # a pair of 3s is no play ...
    assert lm("3") == []
    assert lm("3333") == []  # ... nor a bomb of 3s
    assert lm("34567") == ["4", "5", "6", "7", "34567"]  # ... but 34567 is
    assert "334455" in lm("334455") and "333444" in lm("333444")
    # a joker is never a 3 outside a chain, but may be the 3 of a chain
    assert lm("3R") == ["R"]
    assert "R[3]4567" in lm("4567R")
    assert "3R[3]4455" in lm("34455R")
    # 3s are never kickers: 44433 is no trio + pair
    assert [m for m in lm("44433") if len(m) == 5] == []


def test_jokers_themselves_and_as_wilds():
    assert lm("BR") == ["B", "R"]  # BR is no pair; two jokers alone stand for nothing
    g = cardenvs.make_game("wulong")
    assert [m for m in lm("BBR") if len(g.effective(m)) == 3] == []  # no three jokers
    assert lm("RR", "22") == ["RR"] and lm("BB", "22") == ["BB"]
    assert lm("BB", "RR") == [] and lm("RR", "BB") == ["RR"]
    # R[2]222 is the bomb 2222 (and beats a 4-card bomb of aces like 2222 does)
    assert "222R[2]" in lm("222R")
    assert lm("222R", "AAAA") == ["222R[2]"]
    assert lm("2222", "AAAA") == ["2222"]
    # with the bomb R[2]222 to beat, exactly what beats 2222 is legal
    for hand in ("33334444", "55555", "AAAA", "6666B", "2222"):
        assert lm(hand, "R[2]222") == lm(hand, "2222")
    # a joker never stands in alone
    assert lm("R") == ["R"]


def test_trio_pair_and_trio_chains():
    got = lm("44455")
    assert "44455" in got and "4445" not in got
    assert [m for m in lm("4445") if len(m) == 4] == []  # no trio + single
    # 444RR: a trio with the pair of big jokers, or the bomb 44444 (two readings)
    got = lm("444RR")
    assert "444RR" in got and "444R[4]R[4]" in got
    u = wulong_v0.env().unwrapped
    assert u.game.table.reading(u.string_to_action("444RR")) == "trio_pair 444+RR"
    assert u.game.table.reading(u.string_to_action("444R[4]R[4]")) == "bomb 44444"
    # a trio chain may carry BB and RR together, as its two pairs
    assert "333444BBRR" in lm("333444BBRR")
    assert "333444" in lm("333444") and "3334445566" in lm("3334445566")
    # the carried pairs are of distinct ranks, none a trio's rank
    assert [m for m in lm("3334445555") if len(m) == 10] == []


def test_chains_within_3_to_A():
    assert "TJQKA" in lm("TJQKA")
    assert [m for m in lm("JQKA2") if len(m) == 5] == []
    assert "3456789TJQKA" in lm("3456789TJQKA")
    assert [m for m in lm("4455") if len(m) == 4] == []  # two pairs are no pair chain
    assert lm("56789T", "34567") == ["56789", "6789T"]  # same length, higher


def test_bombs_by_size_then_rank_and_the_rocket():
    assert lm("44444", "2222") == ["44444"]  # more cards beat fewer
    assert lm("2222", "44444") == []
    assert lm("22222", "44444") == ["22222"]  # same size: higher rank
    assert lm("44444", "44444") == []  # equal never beats equal
    # BBRR beats an 8-card bomb, and everything else
    assert lm("BBRR", "22222222") == ["BBRR"]
    assert lm("BBRR5", "22222222") == ["BBRR"]
    # a 12-card bomb: eight 2s and four jokers
    assert "22222222B[2]B[2]R[2]R[2]" in lm("22222222BBRR")
    # bombs beat any non-bomb
    assert lm("5555", "RR") == ["5555"]


def test_equal_singles_and_joker_order():
    assert lm("K5", "K") == []  # the second of two equal singles cannot beat the first
    assert lm("R", "R") == [] and lm("B", "B") == []
    assert lm("R", "B") == ["R"] and lm("B", "R") == []
    # first_played: B and R are equal singles
    assert lm("R", "B", joker_order="first_played") == []
    assert lm("B", "R", joker_order="first_played") == []
    assert lm("RR", "BB", joker_order="first_played") == ["RR"]  # pairs keep their order


def test_wild_joker_options():
    assert "R[3]4567" in lm("4567R", wild_jokers="big_only")
    assert "B[3]4567" not in lm("4567B", wild_jokers="big_only")
    assert lm("4567B", wild_jokers="big_only") == ["4", "5", "6", "7", "B"]
    assert lm("4567R", wild_jokers="none") == ["4", "5", "6", "7", "R"]
    assert lm("444RR", wild_jokers="none") == ["4", "R", "44", "RR", "444", "444RR"]


def test_realisation_notation_round_trip(g):
    assert g.string_to_action("45R[6]78") == g.string_to_action("45678")
    assert g.string_to_action("R[2]222") == g.string_to_action("2222")
    assert g.effective("3R[3]4455") == "334455"
    for text in ("B[5]", "R[2]", "done", "declare", "pass"):
        assert g.action_to_string(g.string_to_action(text)) == text
    with pytest.raises(ValueError, match="natural rank"):
        g.string_to_action("R[B]")
    with pytest.raises(ValueError, match="not wild"):
        cardenvs.make_game("wulong", wild_jokers="big_only").string_to_action("B[5]")


# -- differential tests: fast generator, core generator, slow reference --------------------------


def _random_hand(rng, size, joker_boost=0.5, max_joker=2):
    pool = np.repeat(np.arange(15), [8] * 13 + [2, 2])
    h = np.zeros(NSLOT, np.int64)
    for r in rng.choice(pool, size, replace=False):
        h[r] += 1
    if rng.random() < joker_boost:
        for j in (13, 14):
            h[j] = h[j] + int(rng.integers(0, 3))
    h[13:15] = np.minimum(h[13:15], max_joker)
    return h


@pytest.mark.parametrize("options", [{}, {"wild_jokers": "big_only"}, {"wild_jokers": "none"},
                                     {"joker_order": "first_played"}],
                         ids=["both", "big_only", "none", "first_played"])
def test_fast_generator_equals_core_generator(options):
    """gen_rows (this game's) and gen_legal_wild (the core's) list the same rows, in order."""
    game = cardenvs.make_game("wulong", **options)
    rng = np.random.default_rng(len(str(options)))
    T = len(game.table)
    o1, o2 = np.empty(T + 8, np.int64), np.empty(T + 8, np.int64)
    for _ in range(1500):
        h = _random_hand(rng, int(rng.integers(1, 26)))
        prev = -1 if rng.random() < 0.4 else int(rng.integers(T))
        k1 = W.gen_rows(h, prev, game.tab, game.opts, o1)
        k2 = gen_legal_wild(h, prev, game.tab, game.wr, o2)
        assert k1 == k2 and np.array_equal(o1[:k1], o2[:k2]), (game.deck.format(h), prev)


class _Ref:
    """Readings of the table's rows, from the slow classifier (as in tests/test_wild.py)."""

    def __init__(self, game):
        self.game = game
        self.rules = game.rules
        self.readings = []
        for p in game.table.plays:
            rds = [r for r in classify(p.counts, self.rules) if r.family == p.family
                   and (p.family in (BOMB, ROCKET) or (r.length, r.key) == (p.length, p.key))]
            assert len(rds) == 1
            self.readings.append(rds[0])
        self.by_reading = {(p.counts, self.readings[t]): t for t, p in enumerate(game.table.plays)}

    def slow_rows(self, hand, prev_row, top=None, m=0) -> set[int]:
        """Rows of every sub-multiset of ``hand`` (read with its wilds) that beats ``prev``;
        with ``top``, only sub-multisets holding ``m`` cards of rank ``top``."""
        prev = None if prev_row < 0 else self.readings[prev_row]
        out = set()
        for sub in submultisets(hand):
            if top is not None and sub[top] < m:
                continue
            for w in classify_wild(sub, self.rules, [13, 14], self.game.wild_slots):
                if prev is None or beats(w.reading, prev):
                    out.add(self.by_reading[(w.effective, w.reading)])
        return out


@pytest.fixture(scope="module")
def ref(g) -> _Ref:
    return _Ref(g)


def _state_for(game, hand, prev_row=-1, declared=False):
    s = position(game, [game.deck.format(hand), "4", "5", "6"], 0)
    s[LAST_ROW] = prev_row
    s[W.X_DECL] = int(declared)
    return s


def _rows(game, s) -> set[int]:
    out = np.empty(game.n_actions, np.int64)
    k = game.legal(s, out)
    return {int(a) for a in out[:k] if a < game.pass_id}


def test_legal_rows_match_slow_reference(g, ref):
    rng = np.random.default_rng(3)
    small = np.flatnonzero(g.tab.ncards <= 7)
    for i in range(70):
        h = _random_hand(rng, int(rng.integers(1, 9)), 0.8, max_joker=1)
        prev = -1 if i % 3 == 0 else int(rng.choice(small))
        s = _state_for(g, h, prev)
        assert _rows(g, s) == ref.slow_rows(h, prev), (g.deck.format(h), prev)


@pytest.mark.parametrize("must", ["seed", "one", "all"])
def test_declared_rows_match_slow_reference(must, ref):
    game = cardenvs.make_game("wulong", declare_must_include=must)
    rng = np.random.default_rng(["seed", "one", "all"].index(must))
    for i in range(40):
        h = _random_hand(rng, int(rng.integers(1, 8)), 0.7, max_joker=1)
        if i % 4 == 0:  # four or more of the top rank
            h[12] = 4 + int(rng.integers(0, 2))
            h[13:15] = 0
        if h[1:].sum() == 0:
            continue  # only 3s: failed, never to move
        top = max(r for r in range(15) if h[r])
        m = {"one": 1, "all": int(h[top]), "seed": int(h[top]) if h[top] >= 4 else 1}[must]
        s = _state_for(game, h, -1, declared=True)
        assert _rows(game, s) == ref.slow_rows(h, -1, top, m), (game.deck.format(h), must)


def _slow_realisations(game, hand, row, top=None, m=0) -> set[tuple]:
    """Every (jokers standing in per natural rank, small jokers among them) with which the
    hand's cards make ``row``: physical sub-multisets, each wild joker itself or a rank."""
    c = game.table.plays[row].counts
    size = sum(c)
    ws = game.wild_slots
    out = set()
    for sub in submultisets(hand, {size}):
        if top is not None and sub[top] < m:
            continue
        if any(sub[j] < c[j] for j in (13, 14)):
            continue
        # jokers of the sub-multiset beyond the row's own must stand in (if wild)
        extra = {j: sub[j] - c[j] for j in (13, 14)}
        if any(extra[j] and j not in ws for j in (13, 14)):
            continue
        # naturals used: sub[r]; the rest of each rank's cells is wild
        need = [c[r] - sub[r] for r in range(13)]
        if any(x < 0 for x in need) or sum(need) != extra[13] + extra[14]:
            continue
        if sum(need) and not any(sub[r] for r in range(13)):
            continue
        out.add((tuple(need), extra[13]))
    return out


def test_realisations_match_slow_reference(g):
    rng = np.random.default_rng(9)
    checked = 0
    for i in range(120):
        h = _random_hand(rng, int(rng.integers(2, 9)), 1.0)
        declared = i % 3 == 0
        s = _state_for(g, h, -1, declared)
        top, m = W.top_card(s, 0, g.opts)
        for row in sorted(_rows(g, s))[:12]:
            fast = {(tuple(a + b for a, b in zip(kb, kr)), sum(kb))
                    for kb, kr in g.realisations(s, row)}
            slow = _slow_realisations(g, h, row, top if declared else None, m)
            assert fast == slow, (g.deck.format(h), g.table.row_string(row), declared)
            assert len(g.realisations(s, row)) == len(fast)  # no realisation twice
            checked += 1
    assert checked > 300


def test_declared_rows_closed_form_equals_enumeration(g):
    """A declared player's row is legal exactly when some realisation holds his top card."""
    rng = np.random.default_rng(17)
    for _ in range(60):
        h = _random_hand(rng, int(rng.integers(2, 11)), 1.0)
        s_free = _state_for(g, h, -1, False)
        s_decl = _state_for(g, h, -1, True)
        rows = _rows(g, s_decl)
        for row in _rows(g, s_free):
            assert (row in rows) == (len(g.realisations(s_decl, row)) > 0)


# -- 报牌 ----------------------------------------------------------------------------------------


def test_seed_declared_example_every_play_holds_the_big_joker(g):
    # holding [R, K, 777, 5] after declaring: R alone, R as a wild in a pair / trio / bomb /
    # trio + pair; never a play without the R (by hand: R; 5R[5], 7R[7], KR[K]; 77R[7];
    # 777R[7] = 7777; 5R[5]777 = 777+55; 777KR[K] = 777+KK)
    assert lm("RK7775", declared=True) == [
        "R", "5R[5]", "7R[7]", "KR[K]", "77R[7]", "777R[7]", "5R[5]777", "777KR[K]"]
    # without the declaration: the natural plays and the other joker uses too
    assert {"5", "7", "K", "77", "777"} <= set(lm("RK7775"))
    assert lm("RK7775", plain=True) == ["5", "7", "K", "R", "55", "77", "KK", "777", "7777",
                                        "55777", "777KK"]
    s = position(g, ["RK7775", "4", "5", "6"], 0, declared=[0])
    for text in legal_strings(g, s):
        row = g.table.find(text)
        reals = g.realisations(s, row)
        assert reals and all(sum(kr) + g.table.plays[row].counts[14] >= 1 for _, kr in reals)
    # following, he may pass
    s = position(g, ["RK7775", "4", "5", "6"], 0, declared=[0], prev="4", prev_seat=1)
    assert "pass" in legal_strings(g, s)


def test_top_card_rule_options():
    hand = "222256"
    assert cardenvs.make_game("wulong").legal_moves(hand, declared=True) == ["2222"]
    assert cardenvs.make_game("wulong", declare_must_include="one").legal_moves(
        hand, declared=True) == ["2", "22", "222", "2222"]
    assert cardenvs.make_game("wulong", declare_must_include="all").legal_moves(
        "2256", declared=True) == ["22"]
    assert cardenvs.make_game("wulong").legal_moves("2256", declared=True) == ["2", "22"]


def test_top_card_can_force_a_joker_into_a_chain(g):
    s = position(g, ["R45678", "4", "5", "6"], 0, declared=[0])
    legal = legal_strings(g, s)
    assert "45678" in legal and "34567" in legal and "56789" in legal
    act(g, s, "45678")
    # the R must be in it: it stands for one of 4..8, no all-natural "done"
    assert int(s[PHASE]) == W.P_WILD
    assert legal_strings(g, s) == ["R[4]", "R[5]", "R[6]", "R[7]", "R[8]"]
    act(g, s, "R[6]")  # one realisation left: played at once
    assert int(s[PHASE]) == 1 and hand_of(g, s, 0) == "6"
    assert g.play_string(s) == "45R[6]78"


def test_declare_when_allowed_and_public(g):
    env = wulong_v0.env()
    env.reset(seed=0)
    u = env.unwrapped
    s = u.state_vec
    g2 = u.game
    g2.set_position(s, ["456789TJQK", "5", "6", "7"], 0)
    env._after_move()
    assert "declare" in [g2.action_to_string(a) for a in u.legal_actions()]
    env.step(g2.string_to_action("declare"))
    assert env.agent_selection == "player_0"  # he acts again
    assert "declare" not in [g2.action_to_string(a) for a in u.legal_actions()]
    assert env.infos["player_0"]["declared"] == [True, False, False, False]
    # his hand is in every observation; the others' are not
    a, b = g2.layout.offsets["declared_hands"]
    C = (b - a) // 4
    for seat in range(4):
        obs = env.observe(f"player_{seat}")["observation"]
        rel = (0 - seat) % 4
        block = obs[a + rel * C:a + (rel + 1) * C].reshape(15, 8)
        counts = block.sum(1)
        assert g2.deck.format(counts.astype(int)) == "456789TJQK"
        assert obs[a:b].sum() == 10  # only seat 0 declared
    # eleven cards: no declaring; nobody may declare once someone is out
    s2 = position(g2, ["456789TJQKA", "45", "6", "7"], 0)
    assert "declare" not in legal_strings(g2, s2)
    s3 = position(g2, ["4567", "", "6", "7"], 0, winner=1)
    assert "declare" not in legal_strings(g2, s3)


# -- joker picks -----------------------------------------------------------------------------


def test_picks_only_when_a_real_choice(g):
    # 222R: the bomb 2222 needs the R: played at once
    s = position(g, ["222R", "4", "5", "6"], 0)
    act(g, s, "2222")
    assert int(s[PHASE]) != W.P_WILD and g.play_string(s) == "222R[2]"
    # 55B, the pair 55: two naturals, or one 5 and the small joker
    s = position(g, ["55B9", "4", "5", "6"], 0)
    act(g, s, "55")
    assert int(s[PHASE]) == W.P_WILD and legal_strings(g, s) == ["B[5]", "done"]
    act(g, s, "done")
    assert hand_of(g, s, 0) == "9B" and g.play_string(s) == "55"
    s = position(g, ["55B9", "4", "5", "6"], 0)
    act(g, s, "55")
    act(g, s, "B[5]")  # applied: nothing else can follow the pick
    assert hand_of(g, s, 0) == "59" and g.play_string(s) == "5B[5]"
    # no jokers: never a pick
    s = position(g, ["5599", "4", "5", "6"], 0)
    act(g, s, "55")
    assert int(s[PHASE]) == 1


def test_picks_in_canonical_order(g):
    # 445566 with B and R: none, one joker (3 ranks x 2 kinds), or both jokers (small one on
    # the lower or equal rank): 1 + 6 + 6 = 13 realisations
    s = position(g, ["445566BR9", "4", "5", "6"], 0)
    row = g.string_to_action("445566")
    assert len(g.realisations(s, row)) == 13
    act(g, s, "445566")
    assert legal_strings(g, s) == ["B[4]", "B[5]", "B[6]", "R[4]", "R[5]", "R[6]", "done"]
    act(g, s, "B[5]")
    assert legal_strings(g, s) == ["R[5]", "R[6]", "done"]  # never R[4] after B[5]
    act(g, s, "R[6]")
    assert g.play_string(s) == "445B[5]6R[6]" and hand_of(g, s, 0) == "569"


def test_forced_pick_is_applied_then_a_real_choice(g):
    # 44RR, the trio 444: one 4 is missing, so an R must stand in (applied without asking);
    # the second R may stand in too (4 R[4] R[4]) or not
    s = position(g, ["44RR9", "4", "5", "6"], 0)
    act(g, s, "444")
    assert int(s[W.X_PLEN]) == 1 and legal_strings(g, s) == ["R[4]", "done"]
    act(g, s, "done")
    assert hand_of(g, s, 0) == "9R" and g.play_string(s) == "44R[4]"
    # the jokers standing in are public: the observation's to_beat_wilds of the next seat
    obs = np.empty(g.layout.size, np.float32)
    g.encode(s, 1, obs)
    a, b = g.layout.offsets["to_beat_wilds"]
    planes = obs[a:b].reshape(13, 4)  # per rank: >= 1, >= 2 small; >= 1, >= 2 big jokers
    assert planes.sum() == 1 and planes[ORDER.index("4"), 2] == 1


def test_is_legal_agrees_with_legal_everywhere(g):
    rng = np.random.default_rng(21)
    n = g.n_actions
    out = np.empty(n, np.int64)
    seen_wilds = 0
    for i in range(30):
        hands = ["".join(rng.choice(list("456789TJQKA2"), 7)) + "BR", "5", "6", "7"]
        s = position(g, hands, 0, declared=[0] if i % 2 else [])
        for _ in range(4):
            if g.done(s):
                break
            k = g.legal(s, out)
            legal = set(out[:k].tolist())
            assert all(g.is_legal(s, a) == (a in legal) for a in range(n))
            seen_wilds += int(s[PHASE]) == W.P_WILD
            # mostly a play with a joker choice, to visit the wilds phase
            choice = [int(a) for a in out[:k] if a < g.pass_id and int(s[PHASE]) == 1
                      and len(g.realisations(s, int(a))) > 1]
            if choice and rng.random() < 0.7:
                g.step(s, choice[int(rng.integers(len(choice)))])
            else:
                g.step(s, int(out[rng.integers(k)]))
    assert seen_wilds >= 15


# -- the 3s, turns, failing ----------------------------------------------------------------------


def test_hand_of_33_fails(g):
    s = position(g, ["334", "5", "6", "7"], 0)
    act(g, s, "4")  # left with 33: failed, no longer active
    assert g.status(s) == ["failed", "active", "active", "active"]
    assert int(s[W.A_LOSER]) == 0 and int(s[CUR]) == 1
    s = position(g, ["33", "5", "6", "7"], 1)
    assert g.status(s)[0] == "failed"


def test_trick_goes_on_after_a_player_is_out(g):
    # seat 0 goes out with his last card; nobody beats it: seat 1 (next active after him) leads
    s = position(g, ["5", "47", "46", "48"], 0)
    act(g, s, "5")
    assert g.status(s)[0] == "out" and int(s[PHASE]) == 1
    for _ in range(3):
        act(g, s, "pass")
    assert int(s[LAST_ROW]) == -1 and int(s[CUR]) == 1
    # a failed player's turns are skipped
    s = position(g, ["49", "33", "5A", "6A"], 0)
    act(g, s, "4")
    assert int(s[CUR]) == 2
    act(g, s, "5")
    assert int(s[CUR]) == 3


def test_lone_player_leads_again_until_out(g):
    # three players failed (only 3s) before anyone is out: the fourth plays on alone
    s = position(g, ["45", "33", "3", "333"], 0)
    assert g.status(s) == ["active", "failed", "failed", "failed"]
    act(g, s, "4")
    assert int(s[CUR]) == 0 and int(s[LAST_ROW]) == -1
    act(g, s, "5")
    assert g.done(s)
    # the 末家 is the earliest failure (seat 1); undeclared 头家: 1
    assert list(g.rewards(s)) == [1, -1, 0, 0]


def test_everyone_fails_void_deal(g):
    s = position(g, ["34", "34", "34", "34"], 0)
    act(g, s, "4")  # seat 0 fails
    for _ in range(3):
        act(g, s, "pass")  # 4 cannot beat 4
    assert int(s[CUR]) == 1
    act(g, s, "4")
    act(g, s, "pass")
    act(g, s, "pass")
    act(g, s, "4")  # seat 2
    act(g, s, "pass")
    act(g, s, "4")  # seat 3: every player failed before anyone went out
    assert g.done(s) and list(g.rewards(s)) == [0, 0, 0, 0] and int(s[W.WINNER]) == -1


# -- scoring -------------------------------------------------------------------------------------


def _play_out(g, s):
    """Seat 0 leads 5; seats 1..3 go out in turn with 6, 7, 8."""
    act(g, s, "5")
    if not g.done(s):
        act(g, s, "6")
        act(g, s, "7")


def test_declared_winner_paid_two_by_the_last(g):
    s = position(g, ["5", "6", "7", "8"], 0, declared=[0])
    _play_out(g, s)
    # 头家 seat 0 (declared); seats 1, 2 out; seat 3 the last active: the 末家 pays 2
    assert g.done(s) and list(g.rewards(s)) == [2, 0, 0, -2]


def test_undeclared_winner_paid_one_by_the_last(g):
    s = position(g, ["5", "6", "7", "8"], 0)
    _play_out(g, s)
    assert g.done(s) and list(g.rewards(s)) == [1, 0, 0, -1]


def test_failed_declarers_pay_two_each(g):
    s = position(g, ["5", "6", "7", "8"], 0, declared=[1])
    act(g, s, "5")  # the 头家 is known and the payer fixed: the hand ends at once
    assert g.done(s) and list(g.rewards(s)) == [2, -2, 0, 0]
    s = position(g, ["5", "6", "7", "8"], 0, declared=[0, 1, 3])
    act(g, s, "5")
    assert g.done(s) and list(g.rewards(s)) == [4, -2, 0, -2]


def test_three_failure_pays(g):
    # seat 1 fails with 33; seat 2 then goes out: the 末家 (seat 1) pays the 头家 1
    s = position(g, ["58", "334", "6", "7"], 1)
    act(g, s, "4")
    assert g.status(s)[1] == "failed" and not g.done(s)
    act(g, s, "6")
    assert g.done(s) and list(g.rewards(s)) == [0, -1, 1, 0]
    # a declared 头家 is paid 2 by the failed player
    s = position(g, ["58", "334", "6", "7"], 1, declared=[2])
    act(g, s, "4")
    act(g, s, "6")
    assert list(g.rewards(s)) == [0, -2, 2, 0]


def test_win_loss_and_play_to_completion():
    g = cardenvs.make_game("wulong", reward="win_loss")
    s = position(g, ["5", "6", "7", "8"], 0, declared=[1, 2])
    act(g, s, "5")
    assert list(g.rewards(s)) == [1, -1, -1, 0]
    g = cardenvs.make_game("wulong", play_to_completion=True)
    s = position(g, ["58", "334", "6", "79"], 1)
    act(g, s, "4")
    act(g, s, "6")  # 头家 seat 2, 末家 seat 1 fixed: play goes on for the ranking
    assert not g.done(s) and g.status(s) == ["active", "failed", "out", "active"]
    act(g, s, "7")
    act(g, s, "8")  # seat 0
    act(g, s, "9")  # seat 3 out; seat 0 is the last active
    assert g.done(s) and list(g.rewards(s)) == [0, -1, 1, 0]
    assert g.ranking(s) == [2, 3, 0, 1]


# -- first lead and custom deals -----------------------------------------------------------------


def _suited_deal(fixed: dict[int, list[str]]) -> list[str]:
    """Four 25-card suited hands: the cards in ``fixed`` for their seats, the rest of both
    decks in order (the last 8 unused)."""
    deck = [s + r for r in ORDER[:13] for s in SUITS for _ in range(2)] + ["B", "B", "R", "R"]
    for cards in fixed.values():
        for c in cards:
            deck.remove(c)
    # the 3s not given to a seat go last: among the 8 unused cards
    deck.sort(key=lambda c: c[-1] == "3")
    hands = []
    for seat in range(4):
        h = list(fixed.get(seat, []))
        while len(h) < 25:
            h.append(deck.pop(0))
        hands.append(" ".join(h))
    return hands


@pytest.mark.parametrize("fixed, dealer, first_lead, leader", [
    ({2: ["S3"]}, 0, "S3", 2),
    ({1: ["S3"], 3: ["S3"]}, 2, "S3", 3),  # both ♠3 dealt: first from the dealer's left
    ({1: ["S3"], 3: ["S3"]}, 3, "S3", 1),
    ({1: ["S3"], 2: ["C3"]}, 0, "C3", 2),
    ({1: ["S3"], 2: ["C3"]}, 0, "S3", 1),
], ids=["S3", "two_S3_a", "two_S3_b", "C3_option", "S3_before_C3"])
def test_first_lead_by_suits(fixed, dealer, first_lead, leader):
    env = wulong_v0.env(first_lead=first_lead)
    env.reset(seed=1, options={"hands": _suited_deal(fixed), "dealer": dealer})
    assert env.agent_selection == f"player_{leader}"
    assert env.infos[env.agent_selection]["leader"] == leader


def test_first_lead_without_spade_three():
    # no ♠3 dealt (both among the 8 unused): ♣3 next
    hands = _suited_deal({0: ["H3"], 3: ["C3"]})
    assert all("S3" not in h.split() for h in hands)
    env = wulong_v0.env()
    env.reset(seed=1, options={"hands": hands, "dealer": 2})
    assert env.agent_selection == "player_3"


@pytest.mark.parametrize("options, exc, fragment", [
    ({"hands": ["4" * 8] * 4, "leader": 0}, ValueError, r"hand of seat 0 has 8 cards"),
    ({"hands": ["3" * 8 + "4" * 8 + "5" * 8 + "6"] * 4, "leader": 0}, ValueError,
     r"32 cards of '3'"),
    ({"hands": ["3" * 8 + "4" * 8 + "5" * 8 + "6"] + ["7" * 8 + "8" * 8 + "9" * 8 + "T"] * 3},
     ValueError, r"needs 'leader'"),
    ({"hands": _suited_deal({}), "leader": 1}, ValueError, r"decided by the suits"),
    ({"hands": _suited_deal({})[:3] + ["4" * 8 + "5" * 8 + "6" * 8 + "7"]}, ValueError, "mix"),
    ({"hands": ["S3 S3 S3 " + " ".join(["H4"] * 2) + " " + " ".join(["H5"] * 20)]
      + _suited_deal({})[1:]}, ValueError, r"S3 given 3 times"),
    ({"hands": _suited_deal({}), "kitty": "33"}, ValueError, r"unknown deal option"),
    ({"hands": _suited_deal({}), "dealer": 4}, ValueError, r"dealer=4"),
])
def test_bad_custom_deals(options, exc, fragment):
    assert_bad_deal_kept_out(wulong_v0.env(), options, exc, fragment, seed=0)


def test_unsuited_custom_deal():
    hands = ["3456789TJQKA2" + "3456789TJQKA", "3456789TJQKA2" + "3456789TJQKA",
             "3456789TJQKA2" + "3456789TJQKA", "3456789TJQKA2" + "3456789TJQ" + "BR"]
    env = wulong_v0.env()
    env.reset(options={"hands": hands, "leader": 2})
    assert env.agent_selection == "player_2"
    u = env.unwrapped
    # the 8 unused cards are the rest: 2222 K A B R ... (8 of each natural, 2 of each joker)
    unused = u.game.deck.format(u.state_vec[W.kitty_off(4):W.kitty_off(4) + 16])
    assert unused == "KA2222BR"


# -- observation, env ----------------------------------------------------------------------------


def test_observation_accounts_for_every_card():
    env = wulong_v0.env()
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    g = env.unwrapped.game
    off = g.layout.offsets
    for _ in range(60):
        if not env.agents or env.terminations[env.agent_selection]:
            break
        seat = int(env.agent_selection[-1])
        obs = env.observe(env.agent_selection)["observation"]

        def cards(name, k=0):
            a, _ = off[name]
            return obs[a + k * 120:a + (k + 1) * 120].reshape(15, 8).sum(1)

        total = cards("hand") + cards("others") + sum(cards("played", k) for k in range(4))
        total += sum(cards("declared_hands", k) for k in range(1, 4))
        assert list(total) == [8] * 13 + [2, 2]
        # the unused cards never show: "others" holds at least them
        s = env.unwrapped.state_vec
        unused = s[W.kitty_off(4):W.kitty_off(4) + 15]
        assert np.all(cards("others") >= unused)
        assert g.current(s) == seat
        ids = env.unwrapped.legal_actions()
        env.step(int(ids[rng.integers(len(ids))]))


def test_info_and_render():
    env = wulong_v0.env(render_mode="ansi")
    env.reset(seed=2)
    info = env.infos[env.agent_selection]
    assert info["phase"] == "play" and info["head"] == -1 and info["loser"] == -1
    assert info["status"] == ["active"] * 4 and info["declared"] == [False] * 4
    text = env.render()
    assert "Lanxi Wulong" in text and "unused:" in text


def test_pickle_mid_picks():
    env = wulong_v0.env()
    env.reset(seed=0)
    u = env.unwrapped
    u.game.set_position(u.state_vec, ["445566BR9", "4", "5", "6"], 0)
    env._after_move()
    env.step(u.string_to_action("445566"))
    assert env.infos["player_0"]["phase"] == "wilds"
    clone = pickle.loads(pickle.dumps(env))
    np.testing.assert_array_equal(clone.unwrapped.legal_actions(), u.legal_actions())
    a = u.string_to_action("B[4]")
    env.step(a)
    clone.step(a)
    np.testing.assert_array_equal(clone.unwrapped.state_vec, u.state_vec)


@pytest.mark.parametrize("options", [
    dict(wild_jokers="big_only"), dict(wild_jokers="none"), dict(joker_order="first_played"),
    dict(first_lead="C3", declare_must_include="all"), dict(play_to_completion=True),
    dict(reward="win_loss"),
])
def test_pettingzoo_api_with_options(options):
    from pettingzoo.test import api_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(wulong_v0.env(**options), num_cycles=60)


def test_random_games_keep_the_invariants():
    g = cardenvs.make_game("wulong")
    s = g.new_state()
    out = np.empty(g.n_actions, np.int64)
    rng = np.random.default_rng(8)
    for seed in range(12):
        g.reset(s, seed)
        while not g.done(s):
            k = g.legal(s, out)
            assert k > 0
            a = int(out[rng.integers(k)])
            g.step(s, a)
            hands = [s[hand_off(q):hand_off(q) + 16] for q in range(4)]
            played = [s[W.played_off(4, q):W.played_off(4, q) + 16] for q in range(4)]
            unused = s[W.kitty_off(4):W.kitty_off(4) + 16]
            total = sum(hands) + sum(played) + unused
            assert list(total[:15]) == [8] * 13 + [2, 2]
        r = g.rewards(s)
        assert r.sum() == 0
        w = int(s[W.WINNER])
        assert (w < 0) == (not r.any())
        if w >= 0:
            assert r[w] > 0 and g.status(s)[w] == "out"


def test_bad_options():
    with pytest.raises(ValueError, match="wild_jokers='x'"):
        wulong_v0.env(wild_jokers="x")
    with pytest.raises(ValueError, match="joker_order"):
        wulong_v0.env(joker_order="small_over_big")
    with pytest.raises(ValueError, match="first_lead"):
        wulong_v0.env(first_lead="D3")
    with pytest.raises(ValueError, match="declare_must_include"):
        wulong_v0.env(declare_must_include="some")
    with pytest.raises(TypeError, match="play_to_completion must be a bool"):
        wulong_v0.env(play_to_completion=1)
    with pytest.raises(ValueError, match="reward"):
        wulong_v0.env(reward="x")


def test_legal_moves_bad_input():
    with pytest.raises(ValueError, match="unknown card 'X'"):
        lm("44X")
    with pytest.raises(ValueError, match="at most 25"):
        lm("4" * 8 + "5" * 8 + "6" * 8 + "77")
    with pytest.raises(ValueError, match="not a legal combination"):
        lm("44", "45")
    with pytest.raises(ValueError, match="impossible position"):
        lm("RR", "R")
    # twelve 2s with BB in hand: four of them jokers, but only RR is left
    with pytest.raises(ValueError, match="impossible position"):
        lm("22222222BB", "2222")
    # a wild joker stands in only beside a natural card (rules: "played together with at
    # least one natural card"), so the 2222 on the table holds a natural 2: nine in all
    with pytest.raises(ValueError, match="impossible position"):
        lm("22222222", "2222")
    assert lm("2222222", "2222") != []  # 7 + 1 natural 2s, three jokers standing in
