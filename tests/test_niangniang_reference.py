"""打娘娘 ``niangniang`` against slow, obviously-correct references.

* The move generator (effective rows with wild jokers, and the ``bombs_only`` scope) against
  :func:`cardenvs.core.wild.reference_legal_wild`, which enumerates every sub-multiset of the
  hand and every way its jokers can stand in.
* The joker follow-up: for random hands, walking every branch of the follow-up decision after
  each legal row reaches each way of making that row with the hand's cards exactly once (a
  joker standing in where the hand holds the natural card included; ``B`` and ``R`` count as
  the same wild card, since the game spends ``B`` first).
* The play phase (turns, stuck players, trick ends, places, scores) against a plain-Python
  replay written from the rules text: turns pass to the next active seat (holding cards, not
  stuck); a trick ends when every other active player has passed since the last play, and its
  last player leads if still active, otherwise the next active seat after him; a player left
  with one joker is stuck and ranks below every player who goes out (earlier stuck = lower);
  the hand ends when at most one active player remains, who takes the best place still open;
  the 娘娘 scores +6/+3/-3/-6, catchers +2/+1/-1/-2 (+1/0/-1 in their order when the 娘娘 is
  1st), minus one per 活子 (not 3, 2, B, R) among the returned cards.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

import cardenvs
from cardenvs import niangniang_v0
from cardenvs.core.cards import NSLOT
from cardenvs.core.combos import BOMB, ROCKET
from cardenvs.core.reference import classify, submultisets
from cardenvs.core.state import CUR, LANDLORD, LAST_ROW, PHASE, P_DONE, hand_off, played_off
from cardenvs.core.wild import WildReading, classify_wild, reference_legal_wild
from cardenvs.games.niangniang import NP, P_JOKER

G = "niangniang"
JS = (13, 14)


class _Ref:
    """A game with its reference readings of every row."""

    def __init__(self, **options):
        self.g = cardenvs.make_game(G, **options)
        self.rules = self.g.rules
        self.bombs_only = options.get("joker_wild_scope") == "bombs_only"
        self.readings = []
        for p in self.g.table.plays:
            rds = [r for r in classify(p.counts, self.rules) if r.family == p.family
                   and (p.family in (BOMB, ROCKET) or (r.length, r.key) == (p.length, p.key))]
            assert len(rds) == 1, (self.g.deck.format(p.counts), rds)
            self.readings.append(rds[0])
        self.out = np.empty(len(self.g.table) + 1, np.int64)

    def fast(self, hand, prev_row) -> set:
        k = self.g.legal_rows(np.asarray(hand, np.int64), prev_row, self.out)
        got = [WildReading(self.g.table.plays[t].counts, self.readings[t]) for t in self.out[:k]]
        assert len(set(got)) == k  # one row per (effective play, reading)
        return set(got)

    def slow(self, hand, prev_row) -> set:
        prev = None if prev_row < 0 else self.readings[prev_row]
        res = reference_legal_wild(hand, prev, self.rules, JS, JS)
        if self.bombs_only:  # jokers stand in only inside bombs (BR is itself a bomb)
            h = tuple(int(x) for x in hand) + (0,) * (NSLOT - len(hand))
            res = {w for w in res if w.reading.family in (BOMB, ROCKET)
                   or all(w.effective[r] <= h[r] for r in range(13))}
        return res


def _hand(rng, size: int) -> np.ndarray:
    pool = np.repeat(np.arange(15), [4] * 13 + [1, 1])
    h = np.zeros(NSLOT, np.int64)
    for r in rng.choice(pool, size, replace=False):
        h[r] += 1
    if rng.random() < 0.7:  # jokers are what these tests are about
        for j in JS:
            if h.sum() < 10 and rng.random() < 0.6:
                h[j] = 1
    return h


@pytest.fixture(scope="module")
def default():
    return _Ref()


@pytest.mark.parametrize("options, n", [
    ({}, 70),
    ({"joker_wild_scope": "bombs_only"}, 30),
    ({"rank_order": "three_high", "allow_trio_single": True, "min_pair_chain": 3}, 30),
])
def test_free_leads_match_reference(options, n, default):
    ref = default if not options else _Ref(**options)
    rng = np.random.default_rng(len(options) + 31)
    for _ in range(n):
        h = _hand(rng, int(rng.integers(1, 10)))
        fast, slow = ref.fast(h, -1), ref.slow(h, -1)
        assert fast == slow, (ref.g.deck.format(h), fast ^ slow)


@pytest.mark.parametrize("options, n", [
    ({}, 80),
    ({"joker_wild_scope": "bombs_only"}, 40),
    ({"rank_order": "three_high", "allow_trio_single": True}, 40),
])
def test_follows_match_reference(options, n, default):
    ref = default if not options else _Ref(**options)
    rng = np.random.default_rng(len(options) + 41)
    T = len(ref.g.table)
    for _ in range(n):
        prev = int(rng.integers(T))
        h = _hand(rng, int(rng.integers(1, 11)))
        fast, slow = ref.fast(h, prev), ref.slow(h, prev)
        assert fast == slow, (ref.g.table.row_string(prev), ref.g.deck.format(h), fast ^ slow)


# -- the joker follow-up ------------------------------------------------------------------------------


def _deal_with(g, rng, hand1: np.ndarray) -> dict:
    """A deal after the exchange where seat 1 (who leads) holds ``hand1``."""
    rest = g.deck.full_counts() - hand1
    pool = list(np.repeat(np.arange(15), rest[:15]))
    rng.shuffle(pool)
    hands = [pool[0:10], None, pool[10:20], pool[20:30]]
    bottom = pool[30:]
    fmt = lambda cards: g.deck.format(np.bincount(cards, minlength=16))  # noqa: E731
    naturals = [c for c in bottom if c < 13][:4]
    return {"hands": [fmt(hands[0]), g.deck.format(hand1), fmt(hands[2]), fmt(hands[3])],
            "bottom": fmt(bottom), "niangniang": 0, "returned": fmt(naturals)}


def _realisations(g, s, row) -> list[tuple]:
    """Every final physical play reachable from choosing ``row``, as (naturals, jokers)."""
    seat = int(s[CUR])
    out = []

    def walk(st):
        buf = np.empty(g.n_actions, np.int64)
        if int(st[PHASE]) == P_JOKER:
            k = g.legal(st, buf)
            for a in buf[:k]:
                nxt = st.copy()
                g.step(nxt, int(a))
                walk(nxt)
            return
        po = played_off(NP, seat)
        played = st[po:po + 16]
        out.append((tuple(int(x) for x in played[:13]), int(played[13] + played[14])))

    st = s.copy()
    g.step(st, row)
    walk(st)
    return out


def test_follow_up_reaches_every_way_once(default):
    env = niangniang_v0.env()
    g = env.unwrapped.game
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(6):
        h = np.zeros(NSLOT, np.int64)
        for r in rng.choice(np.repeat(np.arange(13), 4), 8, replace=False):
            h[r] += 1
        h[13] = h[14] = 1
        env.reset(options=_deal_with(g, rng, h))
        s = env.unwrapped.state_vec
        assert int(s[CUR]) == 1
        # the reference: every sub-multiset of the hand and every reading of it with wilds
        ways = defaultdict(set)
        for sub in submultisets(h):
            for w in classify_wild(sub, default.rules, JS, JS):
                ways[w].add((tuple(sub[:13]), sub[13] + sub[14]))
        for row in env.unwrapped.legal_actions():
            key = WildReading(g.table.plays[row].counts, default.readings[row])
            got = _realisations(g, s, int(row))
            assert len(got) == len(set(got)), g.table.row_string(row)  # each way once
            assert set(got) == ways[key], g.table.row_string(row)
            checked += 1
    assert checked > 300


# -- the play phase against a plain-Python replay ------------------------------------------------------


class _PlayRef:
    """The play phase written from the rules text (no shared code with the kernels)."""

    def __init__(self, hands, nn):
        self.hands = [list(h) for h in hands]
        self.nn = nn
        self.place = [0] * NP
        self.n_out = 0
        self.n_stuck = 0
        self.cur = (nn + 1) % NP
        self.last = None
        self.beat = -1
        self.passed: set[int] = set()
        self.done = False

    def active(self, q):
        return self.place[q] == 0

    def next_active(self, q):
        for k in range(1, NP + 1):
            if self.active((q + k) % NP):
                return (q + k) % NP
        raise AssertionError("no active seat")

    def do_pass(self, seat):
        assert self.beat >= 0, "the leader of a trick may not pass"
        self.passed.add(seat)
        if all(q in self.passed for q in range(NP) if self.active(q) and q != self.last):
            self.beat = -1
            self.passed = set()
            self.cur = self.last if self.active(self.last) else self.next_active(self.last)
        else:
            self.cur = self.next_active(seat)

    def do_play(self, seat, row, cards):
        h = self.hands[seat]
        for r in range(16):
            assert cards[r] <= h[r]
            h[r] -= cards[r]
        self.beat, self.last, self.passed = row, seat, set()
        left = sum(h)
        if left == 0:
            self.n_out += 1
            self.place[seat] = self.n_out
        elif left == 1 and h[13] + h[14] == 1:
            self.place[seat] = NP - self.n_stuck
            self.n_stuck += 1
        if sum(self.active(q) for q in range(NP)) <= 1:
            for q in range(NP):
                if self.active(q):
                    self.n_out += 1
                    self.place[q] = self.n_out
            self.done = True
        else:
            self.cur = self.next_active(seat)

    def scores(self, returned):
        p = self.place[self.nn]
        out = [0] * NP
        out[self.nn] = {1: 6, 2: 3, 3: -3, 4: -6}[p] - sum(
            n for ch, n in returned.items() if ch not in "32BR")
        catchers = sorted((self.place[q], q) for q in range(NP) if q != self.nn)
        for k, (pl, q) in enumerate(catchers):
            out[q] = (1, 0, -1)[k] if p == 1 else {1: 2, 2: 1, 3: -1, 4: -2}[pl]
        return out


def test_random_hands_match_the_replay(default):
    env = niangniang_v0.env()
    g = env.unwrapped.game
    rng = np.random.default_rng(77)
    stuck_seen = places_seen = 0
    for game_no in range(200):
        env.reset(seed=game_no)
        s = env.unwrapped.state_vec
        while info_phase(env) in ("take", "return"):
            ids = env.unwrapped.legal_actions()
            env.step(int(ids[rng.integers(len(ids))]))
        s = env.unwrapped.state_vec
        nn = int(s[LANDLORD])
        ref = _PlayRef([s[hand_off(q):hand_off(q) + 16].copy() for q in range(NP)], nn)
        returned = {}
        for ch in g.cards(s, "returned"):
            returned[ch] = returned.get(ch, 0) + 1
        while not ref.done:
            assert int(s[CUR]) == ref.cur and int(s[LAST_ROW]) == ref.beat
            assert g.places(s) == ref.place
            seat = ref.cur
            po = played_off(NP, seat)
            before = s[po:po + 16].copy()
            ids = env.unwrapped.legal_actions()
            if rng.random() < 0.03:  # the fast legality check agrees with the generator
                ok = [a for a in range(g.n_actions) if g.is_legal(s, a)]
                assert ok == sorted(ids.tolist())
            # prefer plays: random games where everyone passes a lot last long
            plays = ids[ids < g.pass_id]
            a = int(plays[rng.integers(len(plays))]) if len(plays) and rng.random() < 0.8 \
                else int(ids[rng.integers(len(ids))])
            env.step(a)
            while not g.done(s) and int(s[PHASE]) == P_JOKER:
                ids = env.unwrapped.legal_actions()  # mostly keep jokers: more stuck players
                env.step(int(ids[-1] if rng.random() < 0.8 else ids[rng.integers(len(ids))]))
            if a == g.pass_id:
                ref.do_pass(seat)
                continue
            cards = s[po:po + 16] - before
            # the physical cards are a way of making the effective row with wild jokers
            key = WildReading(g.table.plays[a].counts, default.readings[a])
            assert key in classify_wild(cards, default.rules, JS, JS)
            ref.do_play(seat, a, cards)
        assert g.done(s) and int(s[PHASE]) == P_DONE
        assert g.places(s) == ref.place
        assert g.last_scores(s) == ref.scores(returned)
        assert [env.rewards[f"player_{q}"] for q in range(NP)] == ref.scores(returned)
        stuck_seen += ref.n_stuck > 0
        places_seen += ref.place[nn] == 1
    # the replay met the rules it is about
    assert stuck_seen >= 5 and places_seen >= 20, (stuck_seen, places_seen)


def info_phase(env) -> str:
    return env.infos[env.agent_selection]["phase"]
