"""Rules queries of the wild-joker games in the bracket notation (``cardenvs.core.wild``).

Both wild-joker games answer ``cardenvs.legal_moves`` the same way: every realisation of a
play, a wild joker standing in written as the joker followed by the rank it stands for in
brackets (``"45R[6]78"``); ``plain=True`` the effective plays; ``prev`` in either notation.

Facts used, from the rules pages (``docs/rules/niangniang.md``, ``wulong.md``) and the
games' own realisation rules (module docstrings of ``cardenvs.games.niangniang`` / ``wulong``):

* 打娘娘: one deck, jokers ``B`` and ``R`` are wild and never played alone; with at least one
  natural card a joker stands for any natural rank the combination needs (2 never in chains).
  Combinations: single (natural), pair, trio, trio + pair, straight (>= 5 within 3..A), pair
  chain (>= 2 pairs), bombs of 4..6 cards of one rank, the joker bomb ``BR``.
  ``joker_wild_scope="bombs_only"``: jokers stand in only inside bombs.
* 打娘娘's realisation rules: the jokers a play needs beyond the hand's naturals stand in; the
  player may spend further jokers on natural cards of the play while jokers are left and one
  natural card stays in the play; ``B`` and ``R`` are interchangeable, ``B`` is spent first.
  Written canonically: natural ranks in rank order, each rank's naturals then its stand-ins,
  ``B`` taking the lowest stood-for ranks.
* 乌龙: two decks; 3s only inside chains (so ``33`` is no play).

The expected lists below are derived by hand from these facts.  A differential test drives the
Da Niangniang engine through every play and every follow-up joker decision and checks that the
query lists exactly the realisations the engine can produce.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import cardenvs
from cardenvs import legal_moves
from cardenvs.core.cards import Deck
from cardenvs.core.state import CUR, LAST_ROW, PHASE, P_DONE, played_off
from cardenvs.core.wild import find_wild, format_wild, parse_wild, sort_wild
from cardenvs.games.niangniang import NP, P_JOKER, X_STOOD

ORDER = "3456789TJQKA2BR"
JB, JR = 13, 14


def nn(hand, prev=None, **kw):
    return legal_moves("niangniang", hand, prev, **kw)


def wl(hand, prev=None, **kw):
    return legal_moves("wulong", hand, prev, **kw)


# -- Da Niangniang: literal positions ------------------------------------------------------------


def test_niangniang_free_lead_realisations():
    # 333 + B: the pair 33 made two ways, the trio two ways, the bomb 3333 with B as its 4th 3
    assert nn("333B") == ["3", "33", "3B[3]", "333", "33B[3]", "333B[3]"]
    assert nn("333B", plain=True) == ["3", "33", "333", "3333"]
    # 5B: the single 5 (no joker alone), the pair 55 only with the joker
    assert nn("5B") == ["5", "5B[5]"]
    assert nn("B") == [] and nn("R") == []
    assert nn("BR") == ["BR"]  # the joker bomb; never a pair of jokers standing for a rank
    # B is spent first: with one joker standing in it is B; R only when B is already in
    assert nn("5BR") == ["5", "5B[5]", "BR", "5B[5]R[5]"]
    assert nn("5R") == ["5", "5R[5]"]
    # B takes the lowest stood-for rank
    assert nn("56BR") == ["5", "6", "5B[5]", "6B[6]", "BR", "5B[5]R[5]", "6B[6]R[6]",
                          "5B[5]6R[6]"]
    # both jokers: pairs/trios/bomb of 5s, the pair chains 4455 and 5566
    assert nn("55BR") == ["5", "55", "5B[5]", "BR", "55B[5]", "5B[5]R[5]", "B[4]R[4]55",
                          "55B[5]R[5]", "55B[6]R[6]"]
    # a straight with its missing 5; pairs with the joker; no other chain
    assert nn("4B678") == ["4", "6", "7", "8", "4B[4]", "6B[6]", "7B[7]", "8B[8]", "4B[5]678"]
    # the pair chain 3344 with or without the joker in it; trio + pair with the joker
    assert nn("3344B") == ["3", "4", "33", "3B[3]", "44", "4B[4]", "33B[3]", "44B[4]", "3344",
                           "334B[4]", "3B[3]44", "33B[3]44", "3344B[4]"]


def test_niangniang_options():
    # bombs_only: no joker outside bombs, any number of them inside
    assert nn("555B", joker_wild_scope="bombs_only") == ["5", "55", "555", "555B[5]"]
    assert nn("5555B", joker_wild_scope="bombs_only") == [
        "5", "55", "555", "5555", "555B[5]", "5555B[5]"]
    assert nn("5B", joker_wild_scope="bombs_only") == ["5"]
    # three_high: 3 is above 2 and written in that order
    assert nn("32B", rank_order="three_high") == ["2", "3", "2B[2]", "3B[3]"]


def test_niangniang_prev_in_either_notation():
    # 666 + a joker beats the bomb 5555 however it was made
    for prev in ("5555", "555B[5]", "55B[5]5"):
        assert nn("666R", prev) == ["666R[6]"]
    # a straight to beat, written with its joker or plainly
    for prev in ("45678", "4R[5]678", "R[4]5678"):
        assert nn("789TB", prev) == ["B[6]789T", "789TB[J]"]
        assert nn("789TB", prev, plain=True) == ["6789T", "789TJ"]
    # the play to beat holds the only B
    with pytest.raises(ValueError, match="impossible position.*'B'"):
        nn("789TB", "45B[6]78")
    with pytest.raises(ValueError, match="impossible position"):
        nn("666B", "555B[5]")
    assert nn("666B", "555R[5]") == ["666B[6]"]
    # the joker bomb is written as itself
    assert nn("3333", "BR") == ["3333"]
    # bombs_only: a prev with a joker standing in outside a bomb cannot happen
    with pytest.raises(ValueError, match="only inside a bomb"):
        nn("66", "5B[5]", joker_wild_scope="bombs_only")
    assert nn("66", "5B[5]") == ["66"]


@pytest.mark.parametrize("game", ["niangniang", "wulong"])
@pytest.mark.parametrize("prev, fragment", [
    ("5[5]", r"'\[' after '5', which is no joker"),
    ("[5]5", r"'\[' after nothing"),
    ("5B[Z]", r"B\[Z\] must stand for one natural rank"),
    ("5B[B]", r"B\[B\] must stand for one natural rank"),
    ("5B[55]", r"must stand for one natural rank"),
    ("5B[5", r"unclosed '\['"),
    ("55]", r"'\]' without an opening"),
    ("5X", r"unknown card 'X'"),
    ("B[5]R[5]", r"at least one natural card"),
    ("5B[7]", r"reads '57' with its jokers standing in.*not a legal combination"),
    ("JQKAB[2]", r"reads 'JQKA2'.*not a legal combination"),  # 2 never in a chain
])
def test_malformed_bracket_notation(game, prev, fragment):
    with pytest.raises(ValueError, match=fragment):
        legal_moves(game, "66", prev)


def test_bare_wild_joker_in_prev_hints_at_brackets():
    with pytest.raises(ValueError, match=r"not a legal combination.*in brackets, e\.g\. 'B\[5\]'"):
        nn("66", "555B")
    with pytest.raises(ValueError, match=r"in brackets"):
        nn("66", "4B678")


def test_query_keywords():
    with pytest.raises(TypeError, match="plain must be a bool"):
        nn("55", plain=1)
    with pytest.raises(ValueError, match="has no option 'declared'"):
        nn("55", declared=True)  # a wulong keyword only
    with pytest.raises(ValueError, match="has no option 'plain'"):
        legal_moves("doudizhu", "55", plain=True)  # no wild jokers, no query keywords
    assert legal_moves("doudizhu", "55", "44") == ["55"]


# -- Lanxi Wulong through the same notation ----------------------------------------------------------


def test_wulong_realisations_and_prev():
    # 3s only inside chains: a joker cannot stand for a 3 in a pair
    with pytest.raises(ValueError, match=r"reads '33'.*not a legal combination"):
        wl("44", "3B[3]")
    # 4567 + R: singles (R itself too), the pairs with R, and the straight 34567 and 45678
    assert wl("4567R") == ["4", "5", "6", "7", "R", "4R[4]", "5R[5]", "6R[6]", "7R[7]",
                           "R[3]4567", "4567R[8]"]
    assert wl("4567R", plain=True) == ["4", "5", "6", "7", "R", "44", "55", "66", "77",
                                       "34567", "45678"]
    # the bomb 2222 to beat, written either way
    assert wl("3333R", "2222") == wl("3333R", "222R[2]") == []
    assert wl("44444", "222R[2]") == ["44444"]
    # wild_jokers="big_only": B never stands in
    with pytest.raises(ValueError, match="B is not wild"):
        legal_moves("wulong", "66", "5B[5]", wild_jokers="big_only")


# -- the core notation: round trips ------------------------------------------------------------------


def _random_realisation(rng, deck: Deck, wild: tuple[int, ...]):
    """Effective cards and stand-ins of a random physical play (not necessarily a combination)."""
    eff = np.zeros(16, np.int64)
    stands = np.zeros((16, 16), np.int64)
    for r in range(13):
        if rng.random() < 0.3:
            eff[r] = rng.integers(0, deck.copies[r] + 1)
    has_nat = eff[:13].sum() > 0
    for j in (JB, JR):
        for _ in range(int(rng.integers(0, deck.copies[j] + 1))):
            if has_nat and j in wild and rng.random() < 0.7:
                t = int(rng.integers(0, 13))
                stands[j, t] += 1
                eff[t] += 1
            else:
                eff[j] += 1
    return eff, stands


@pytest.mark.parametrize("n_decks, wild", [(1, (JB, JR)), (2, (JB, JR)), (2, (JR,))])
def test_parse_format_round_trip(n_decks, wild):
    deck = Deck.standard(ORDER, n_decks)
    rng = np.random.default_rng(1000 + n_decks + len(wild))
    n_stand = 0
    for _ in range(600):
        eff, stands = _random_realisation(rng, deck, wild)
        text = format_wild(deck, eff, stands, (JB, JR))
        wp = parse_wild(text, deck, (JB, JR), wild)
        np.testing.assert_array_equal(wp.effective, eff)
        np.testing.assert_array_equal(wp.stands, stands)
        assert format_wild(deck, wp.effective, wp.stands, (JB, JR)) == text
        assert wp.text == deck.format(eff)  # canonical writing: the effective cards in order
        phys = eff - stands.sum(0) + stands.sum(1)
        np.testing.assert_array_equal(wp.physical, phys)
        assert (phys[:15] <= np.array(deck.copies)).all()
        n_stand += wp.n_stand
        # the writing may list its cards in any order: the same realisation
        tokens = re.findall(r"[BR]\[.\]|.", text)
        rng.shuffle(tokens)
        wq = parse_wild("".join(tokens), deck, (JB, JR), wild)
        np.testing.assert_array_equal(wq.effective, eff)
        np.testing.assert_array_equal(wq.stands, stands)
    assert n_stand > 300  # the property covered many stand-ins


def test_plain_and_exact_writings():
    deck = Deck.standard(ORDER, 1)
    js = (JB, JR)
    # plain: the effective cards, jokers may have stood in (five 4s from one deck)
    wp = parse_wild("44444", deck, js, js)
    assert wp.effective[1] == 5 and wp.n_stand == 0 and wp.text == "44444"
    # with brackets every physical card is named: five natural 4s cannot exist
    with pytest.raises(ValueError, match="too many '4'"):
        parse_wild("44444B[4]", deck, js, js)
    with pytest.raises(ValueError, match="too many 'B'"):
        parse_wild("5B[5]B", deck, js, js)
    with pytest.raises(TypeError, match="play must be a string"):
        parse_wild(55, deck, js, js)
    # "+" and spaces are kept for the body+kickers notation of Table.find
    assert parse_wild("333 444+B[5]5", deck, js, js).text == "333 444+55"


def test_format_examples_and_sort():
    deck = Deck.standard(ORDER, 2)
    st = np.zeros((16, 16), np.int64)
    st[JR, 3] = 1  # R stands for a 6
    assert format_wild(deck, deck.parse("45678"), st, (JB, JR)) == "45R[6]78"
    st = np.zeros((16, 16), np.int64)
    st[JB, 1] = st[JR, 1] = 1
    assert format_wild(deck, np.array([0, 3] + [0] * 12 + [0, 0]), st, (JB, JR)) == "4B[4]R[4]"
    eff = deck.parse("444RR")  # a trio with a pair of big jokers as themselves
    assert format_wild(deck, eff, np.zeros((16, 16), np.int64), (JB, JR)) == "444RR"
    assert sort_wild(["3B[3]", "4", "33", "BR", "3", "33"], deck) == [
        "3", "4", "33", "3B[3]", "BR"]
    g = cardenvs.make_game("wulong")
    row, wp = find_wild(g.table, "45R[6]78", None, (JB, JR), (JB, JR))
    assert g.table.row_string(row) == "45678" and wp.stood_for[3] == 1 and wp.n_stand == 1


# -- Da Niangniang: the query lists exactly what the engine's joker decisions produce ------------------


def _engine_plays(g, s):
    """{(effective row counts, physical cards played, ranks stood for): state after} over every
    play row of the seat to move and every follow-up joker decision."""
    seat = int(s[CUR])
    po = played_off(NP, seat)
    so = X_STOOD + 16 * seat
    buf = np.empty(g.n_actions, np.int64)
    k = g.legal(s, buf)
    found = {}

    def rec(st, row):
        if st[PHASE] == P_JOKER:
            b = np.empty(g.n_actions, np.int64)
            m = g.legal(st, b)
            for a in b[:m].tolist():
                s2 = st.copy()
                g.step(s2, a)
                rec(s2, row)
            return
        key = (tuple(g.tab.counts[row].tolist()), tuple((st[po:po + 16] - s[po:po + 16]).tolist()),
               tuple((st[so:so + 16] - s[so:so + 16]).tolist()))
        assert key not in found  # each realisation reached one way
        found[key] = st

    for a in buf[:k].tolist():
        if a < g.pass_id:
            s2 = s.copy()
            g.step(s2, a)
            rec(s2, a)
    return found


def _query_keys(g, texts):
    out = {}
    for t in texts:
        wp = parse_wild(t, g.deck, (JB, JR), (JB, JR))
        key = (tuple(wp.effective.tolist()), tuple(wp.physical.tolist()),
               tuple(wp.stood_for.tolist()))
        assert key not in out
        out[key] = t
    return out


def _random_deal(rng):
    cards = np.array([r for r in range(13) for _ in range(4)] + [JB, JR])
    rng.shuffle(cards)
    hands = [cards[10 * i:10 * i + 10] for i in range(4)]
    bottom = cards[40:]
    # jokers often in the first leader's hand (seat 1: the 娘娘 is seat 0)
    for j in (JB, JR):
        if rng.random() < 0.6 and j not in hands[1]:
            where = [(q, i) for q in (0, 2, 3) for i in range(10) if hands[q][i] == j]
            where += [(4, i) for i in range(14) if bottom[i] == j]
            if where:
                q, i = where[0]
                src = bottom if q == 4 else hands[q]
                k = int(rng.integers(0, 10))
                src[i], hands[1][k] = hands[1][k], src[i]
    fmt = lambda a: "".join(ORDER[int(x)] for x in sorted(a))
    returned = [int(x) for x in bottom if x < 13][:4]
    return {"hands": [fmt(h) for h in hands], "bottom": fmt(bottom), "niangniang": 0,
            "returned": fmt(returned)}


@pytest.mark.parametrize("options", [{}, {"joker_wild_scope": "bombs_only"},
                                     {"rank_order": "three_high"}])
def test_query_matches_engine_realisations(options):
    g = cardenvs.make_game("niangniang", **options)
    rng = np.random.default_rng(2024 + len(str(options)))
    n_checked = n_joker_plays = 0
    for deal in range(40):
        s = g.new_state()
        g.custom_deal(s, _random_deal(rng), seed=deal)
        prev_text = None
        for ply in range(8):
            if s[PHASE] == P_DONE:
                break
            seat = int(s[CUR])
            hand = g.cards(s, f"hand{seat}")
            texts = legal_moves("niangniang", hand, prev_text, **options)
            assert len(texts) == len(set(texts))
            engine = _engine_plays(g, s)
            query = _query_keys(g, texts)
            assert set(query) == set(engine), (hand, prev_text)
            if prev_text is not None:  # the plain writing of prev answers the same
                plain = parse_wild(prev_text, g.deck, (JB, JR), (JB, JR)).text
                assert legal_moves("niangniang", hand, plain, **options) == texts
            n_checked += 1
            n_joker_plays += sum(1 for key in query if sum(key[2]))
            if prev_text is not None and (not texts or rng.random() < 0.3):
                g.step(s, g.pass_id)
                if s[LAST_ROW] < 0:
                    prev_text = None
                continue
            prev_text = texts[int(rng.integers(0, len(texts)))]
            s = engine[next(k for k, t in query.items() if t == prev_text)]
    assert n_checked >= 250 and n_joker_plays >= (40 if options.get("joker_wild_scope") else 400)
