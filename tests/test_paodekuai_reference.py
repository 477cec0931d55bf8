"""Differential test of Pao De Kuai's legal actions against a slow reference written from the
rules page (``docs/rules/paodekuai.md``), over many random positions of every option set.

The reference classifies every sub-multiset of the mover's hand straight from the page's
definitions (no play table, no bit planes), keeps the readings that beat the play to beat,
then applies the play rules: a short trio / airplane only as the whole hand, the first play of
the deal holds a 3 (the lead card's rank), a single is the highest card when the next seat
holds one card, and pass only when following (with must-beat: only when nothing is legal).
Both sides are compared as sets of ``(counts, family, length, key)`` plus pass; bombs by
their cards (the two sides number bomb power differently).
"""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs
from cardenvs.core.combos import (
    AIRPLANE_PAIRS, BOMB, FOUR_TWO_SINGLES, PAIR, PAIR_CHAIN, SINGLE, STRAIGHT, TRIO_PAIR,
)
from cardenvs.core.reference import Reading, beats, submultisets
from cardenvs.core.state import CUR, LAST_ROW, LAST_SEAT, NLOG, PHASE, P_DONE, hand_off

A = 11  # rank index of A ("3456789TJQKA2")


def readings(c, opts) -> list[tuple[Reading, bool]]:
    """Every reading of the cards ``c`` (13 rank counts) with a flag: short (whole hand only)."""
    n = sum(c)
    ranks = [r for r in range(13) if c[r]]
    out = []
    if n == 1:
        out.append((Reading(SINGLE, 1, ranks[0]), False))
    if n == 2 and len(ranks) == 1:
        out.append((Reading(PAIR, 1, ranks[0]), False))
    run = len(ranks) >= 2 and ranks[-1] - ranks[0] == len(ranks) - 1 and ranks[-1] <= A
    if run and len(ranks) >= 5 and all(c[r] == 1 for r in ranks):
        out.append((Reading(STRAIGHT, len(ranks), ranks[-1]), False))
    if run and all(c[r] == 2 for r in ranks):
        out.append((Reading(PAIR_CHAIN, len(ranks), ranks[-1]), False))
    if n == 4 and len(ranks) == 1:
        out.append((Reading(BOMB, 0, ranks[0], 1 + ranks[0]), False))
    if opts.get("aaa_bomb") and n == 3 and c[A] == 3:
        out.append((Reading(BOMB, 0, A, 100), False))
    if opts.get("four_with_three"):
        for r in ranks:
            if c[r] == 4 and n == 7:
                out.append((Reading(FOUR_TWO_SINGLES, 1, r), False))
    # trios and airplanes: L consecutive trio ranks (L = 1: any rank), the rest kickers of
    # other ranks, 2 per trio (fewer: short)
    for lo in range(13):
        for hi in range(lo, 13):
            chain = range(lo, hi + 1)
            L = hi - lo + 1
            if L >= 2 and hi > A:
                continue
            if any(c[r] != 3 for r in chain):  # a 4th card would be a kicker of a trio's rank
                continue
            if opts.get("aaa_bomb") and A in chain:
                continue
            k = n - 3 * L
            if k > 2 * L or (k < 2 * L and not opts.get("short_finish", True)):
                continue
            fam = TRIO_PAIR if L == 1 else AIRPLANE_PAIRS
            out.append((Reading(fam, L, hi), k < 2 * L))
    return out


def reference_actions(game, s) -> set:
    opts = game.options
    seat = int(s[CUR])
    hand = [int(x) for x in s[hand_off(seat):hand_off(seat) + 13]]
    n = sum(hand)
    prev = int(s[LAST_ROW])
    pr = None
    if prev >= 0:
        p = game.table.plays[prev]  # the row fixes the reading of the play to beat
        pr = Reading(p.family, p.length, p.key)
        if p.family == BOMB:
            r = max(range(13), key=lambda q: p.counts[q])
            pr = Reading(BOMB, 0, r, 100 if p.counts[r] == 3 else 1 + r)
    first = int(s[NLOG]) == 0 and opts["first_play_has_lead_card"] and hand[0] > 0
    nxt = (seat + 1) % 3
    top = None
    if opts["top_single_on_last_card"] and s[hand_off(nxt):hand_off(nxt) + 16].sum() == 1:
        top = max(r for r in range(13) if hand[r])
    out = set()
    for sub in submultisets(hand + [0] * 3):
        for rd, short in readings(sub[:13], opts):
            if short and sum(sub) != n:
                continue
            if pr is not None and not beats(rd, pr):
                continue
            if first and sub[0] == 0:
                continue
            if top is not None and rd.family == SINGLE and rd.key != top:
                continue
            out.add(_norm(sub, rd.family, rd.length, rd.key))
    if prev >= 0 and (not out or not opts["must_beat"]):
        out.add("pass")
    return out


def _norm(counts, family, length, key):
    counts = tuple(int(x) for x in counts[:13])
    if family == BOMB:
        return (counts, BOMB, 0, max(range(13), key=lambda q: counts[q]))
    return (counts, int(family), int(length), int(key))


def fast_actions(game, s) -> set:
    buf = np.empty(game.n_actions + 1, np.int64)
    k = game.legal(s, buf)
    out = set()
    for a in buf[:k]:
        if a == game.pass_id:
            out.add("pass")
        else:
            p = game.table.plays[int(a)]
            out.add(_norm(p.counts, p.family, p.length, p.key))
    return out


OPTION_SETS = [
    {},
    {"deck": "15", "aaa_bomb": True},
    {"four_with_three": True, "short_finish": False, "first_lead": "H3"},
    {"must_beat": False, "top_single_on_last_card": False, "first_play_has_lead_card": False},
]


@pytest.mark.parametrize("opts", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_legal_actions_match_the_reference(opts):
    game = cardenvs.make_game("paodekuai", **opts)
    rng = np.random.default_rng(19)
    buf = np.empty(game.n_actions + 1, np.int64)
    checked = follows = shorts = tops = 0
    deal = 0
    while checked < 250:
        s = game.new_state()
        game.reset(s, deal)
        deal += 1
        while not game.done(s):
            seat = int(s[CUR])
            hand = s[hand_off(seat):hand_off(seat) + 16]
            if np.prod(hand[hand > 0] + 1) <= 4000 and rng.random() < 0.5:
                ref, fast = reference_actions(game, s), fast_actions(game, s)
                assert fast == ref, (game.render(s), sorted(map(str, fast ^ ref))[:10])
                checked += 1
                follows += int(s[LAST_ROW]) >= 0
                shorts += any(isinstance(x, tuple) and x[1] in (TRIO_PAIR, AIRPLANE_PAIRS)
                              and sum(x[0]) < 5 * x[2] for x in fast)
                nxt = (seat + 1) % 3
                tops += int(s[hand_off(nxt):hand_off(nxt) + 16].sum() == 1)
            k = game.legal(s, buf)
            a = int(buf[rng.integers(k)])
            assert game.is_legal(s, a)
            game.step(s, a)
        assert int(s[PHASE]) == P_DONE
    assert follows >= 80 and tops >= 3
    # end-game hands: trios and trio chains with 0..2 kickers a trio, as a free lead and
    # against a trio + 2 / an airplane of their length (random play rarely reaches them)
    copies = game.deck.copies
    kick_rows = [i for i, p in enumerate(game.table.plays) if p.family in (TRIO_PAIR, AIRPLANE_PAIRS)]
    for i in range(150):
        s = game.new_state()
        game.reset(s, 1000 + i)
        s[NLOG] = 1  # past the first play
        L = int(rng.integers(1, 4))
        lo = int(rng.integers(0, 12 - L + (L == 1)))
        hand = np.zeros(16, np.int64)
        if all(copies[r] >= 3 for r in range(lo, lo + L)):
            hand[lo:lo + L] = 3
        for _ in range(int(rng.integers(0, 2 * L + 1))):
            r = int(rng.integers(0, 13))
            if hand[r] < copies[r] and not lo <= r < lo + L:
                hand[r] += 1
        seat = int(s[CUR])
        s[hand_off(seat):hand_off(seat) + 16] = hand
        if rng.random() < 0.5:
            s[LAST_ROW], s[LAST_SEAT] = int(rng.choice(kick_rows)), (seat + 2) % 3
        ref, fast = reference_actions(game, s), fast_actions(game, s)
        assert fast == ref, (game.render(s), sorted(map(str, fast ^ ref))[:10])
        shorts += any(isinstance(x, tuple) and x[1] in (TRIO_PAIR, AIRPLANE_PAIRS)
                      and sum(x[0]) < 5 * x[2] for x in fast)
    assert (shorts >= 20) == opts.get("short_finish", True), shorts


def test_is_legal_agrees_with_legal_on_every_action_id():
    """``is_legal`` (which checks must-beat with an early-exit scan) against ``legal``."""
    game = cardenvs.make_game("paodekuai")
    rng = np.random.default_rng(3)
    buf = np.empty(game.n_actions + 1, np.int64)
    for deal in range(3):
        s = game.new_state()
        game.reset(s, 100 + deal)
        while not game.done(s):
            k = game.legal(s, buf)
            legal = set(buf[:k].tolist())
            for a in list(legal) + rng.integers(0, game.n_actions, 50).tolist() + [game.pass_id]:
                assert game.is_legal(s, int(a)) == (a in legal), (a, game.render(s))
            game.step(s, int(buf[rng.integers(k)]))
