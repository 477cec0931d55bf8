"""The fast ``heuristic`` rollout policy (cardenvs.core.policy.score_actions, reading the
packed action records) against its reference (score_actions_reference, reading the play
table column by column): the same score of every legal action at thousands of positions of
every game, and rollouts with the same seed returning the same pay."""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs
from cardenvs.core.kernels import rng_below
from cardenvs.core.policy import (
    K_PASS, K_PLAY, PP_KINDS, PP_NA, PP_R, PP_RECS, PP_WILD, REC_BIG, REC_DOUBLES, REC_FAMILY,
    REC_KEY, REC_KIND, REC_NCARDS, REC_POWER, REC_RSUM, cost_of_masks, hand_cost, masks_of,
    KIND_HEURISTIC, PP_GREEDY, greedy_params, pack_records, policy_choose_play, policy_params,
    score_actions, score_actions_reference,
)
from cardenvs.core.combos import ROCKET
from cardenvs.core.state import CUR, HDR, LAST_ROW, LAST_SEAT
from cardenvs.vector import VectorGame, rollout_streams

from cardenvs.agents.search import RolloutAgent
from helpers import random_decisions
from test_rollout_policy import replay

GAMES = list(cardenvs.GAMES)


class Scorer:
    """Both scorers of one game over shared scratch arrays."""

    def __init__(self, game):
        self.g = game
        self.pp = policy_params(game)
        self.tmp = np.zeros(game.state_size, np.int64)
        self.work = np.zeros(64, np.int64)

    def scores(self, fn, state, legal):
        g = self.g
        legal = np.ascontiguousarray(legal, np.int64)
        out = np.full(g.n_actions + 1, np.nan)
        fn(state.copy(), legal, np.int64(len(legal)), g.tab, g.opts, self.pp, g.k_step,
           self.tmp, out, self.work)
        return out[:len(legal)]


def mixed_decisions(game, n_games: int, seed: int, p_policy: float = 0.7):
    """``(state copy, legal ids)`` of every decision with two or more legal actions in games
    where each action is the heuristic's with probability ``p_policy``, else uniform: the
    positions the rollouts meet (partners, endgames, cashing) beside random ones."""
    agent = RolloutAgent(game)
    rng = np.random.default_rng(seed)
    s = game.new_state()
    buf = np.empty(game.n_actions, np.int64)
    for _ in range(n_games):
        game.reset(s, int(rng.integers(2**62)))
        while not game.done(s):
            k = game.legal(s, buf)
            legal = buf[:k].copy()
            if k > 1:
                yield s.copy(), legal
            if rng.random() < p_policy:
                a = agent.act_state(s, legal)
            else:
                a = int(legal[rng.integers(k)])
            game.step(s, a)


@pytest.mark.parametrize("name", GAMES)
def test_records_hold_the_table(name):
    """Every field of every packed record is the play table's value; the planes give the
    counts of every row the record does not flag as holding more than four of a rank."""
    game = cardenvs.make_game(name)
    pp = policy_params(game)
    tab = game.tab
    A, T = game.n_actions, len(tab.ncards)
    rec = pp[pp[PP_RECS]:pp[PP_RECS] + 2 * A].reshape(A, 2)
    assert rec.shape == (A, 2) and pp[PP_RECS] + 2 * A == len(pp)

    def field(spec):
        shift, bits = spec
        return (rec[:, 1] >> shift) & ((1 << bits) - 1)

    assert np.array_equal(field(REC_KIND), pp[PP_KINDS:PP_KINDS + A])
    assert (field(REC_KIND)[:T] == K_PLAY).all()
    assert (field(REC_KIND) == K_PASS).sum() == 1
    for spec, col in ((REC_NCARDS, tab.ncards), (REC_FAMILY, tab.family), (REC_KEY, tab.key),
                      (REC_POWER, tab.power), (REC_DOUBLES, tab.doubles)):
        assert np.array_equal(field(spec)[:T], col[:T])
        assert (field(spec)[T:] == 0).all()
    assert np.array_equal(field(REC_RSUM)[:T], tab.counts[:T] @ np.arange(16))
    assert np.array_equal(rec[:T, 0], tab.lo[:T])
    big = field(REC_BIG)[:T] == 1
    assert np.array_equal(big, (tab.counts[:T] > 4).any(1))
    planes = np.stack([(tab.lo[:T, None] >> (16 * p + np.arange(16))) & 1
                       for p in range(4)]).sum(0)
    assert np.array_equal(planes[~big], tab.counts[:T][~big])
    assert np.array_equal(tab.ncards[:T], tab.counts[:T].sum(1))


@pytest.mark.parametrize("name", GAMES)
def test_cost_of_masks_equals_the_full_hand_cost(name):
    """The plan cost from the rank masks alone equals hand_cost(full=1) on 4000 random
    hands of at most four natural cards a rank (the deck's copies at most), and the
    literal hands of the rules' examples: a rocket with a bomb, a straight over pairs."""
    game = cardenvs.make_game(name)
    pp = policy_params(game)
    R = int(pp[PP_R])
    rng = np.random.default_rng(41)
    copies = np.minimum(np.asarray(game.deck.copies, np.int64), 4)
    natural = np.array([not (pp[PP_WILD] >> r) & 1 for r in range(R)])
    c = np.zeros(16, np.int64)
    seen = set()
    for _ in range(4000):
        h = np.zeros(16, np.int64)
        h[:R] = rng.integers(0, copies + 1) * (rng.random(R) < rng.random()) * natural
        want = hand_cost(h, pp, c, 1)
        got = cost_of_masks(*masks_of(h, pp), pp)
        assert got == want, (h[:R], got, want)
        seen.add(want)
    assert len(seen) > 8
    if name == "doudizhu":  # ranks 3..A, 2, small and big joker: slots 0..14
        h = np.zeros(16, np.int64)
        h[[13, 14]] = 1  # the rocket: -1
        h[5] = 4  # a bomb of 8s: -1
        h[[0, 1, 2, 3, 4]] = [1, 1, 2, 1, 1]  # a straight 3-7 leaves a 5: 1 + 1
        assert hand_cost(h, pp, c, 1) == 0.0
        assert cost_of_masks(*masks_of(h, pp), pp) == 0.0


def test_records_refuse_values_that_do_not_fit():
    game = cardenvs.make_game("wakeng")
    pp = policy_params(game)
    A = game.n_actions
    kinds = pp[PP_KINDS:PP_KINDS + A]
    rsum = pp[PP_KINDS + A:PP_KINDS + 2 * A].copy()
    rsum[0] = 1 << 10
    with pytest.raises(ValueError, match="rsum in 10 bits"):
        pack_records(game.tab, kinds, rsum, A)


@pytest.mark.parametrize("name", GAMES)
def test_fast_scores_equal_the_reference(name):
    """The same score (bit for bit, inf included) of every legal action, hence the same
    choice, at >= 3000 positions of each game: random games and games mostly played by the
    policy itself, every phase."""
    game = cardenvs.make_game(name)
    sc = Scorer(game)
    n = chosen = 0
    leads = follows = 0
    for source, quota in ((random_decisions(game, 10**6, seed=21), 1500),
                          (mixed_decisions(game, 10**6, seed=22), 3000)):
        for s, legal, *_ in source:
            if len(legal) < 2:
                continue
            fast = sc.scores(score_actions, s, legal)
            ref = sc.scores(score_actions_reference, s, legal)
            assert not np.isnan(ref).any()
            assert np.array_equal(fast, ref), (n, legal, fast, ref)
            # the rollouts' entry point (its own inlined copy of the scorer): the first best
            c = policy_choose_play(s.copy(), legal, np.int64(len(legal)), game.tab.counts,
                                   sc.pp, np.zeros(len(legal) + 1), sc.work, KIND_HEURISTIC,
                                   np.zeros(1, np.int64), 0, 0.0)
            if c >= 0:
                assert c == int(np.argmin(ref)), (n, legal, c, ref)
                chosen += 1
            n += 1
            if s[LAST_ROW] >= 0 and s[LAST_SEAT] != s[CUR]:
                follows += 1
            else:
                leads += 1
            if n >= quota:
                break
    assert n >= 3000, n
    assert leads > 300 and follows > 300, (leads, follows)
    assert chosen > 1000, chosen  # card play: most decisions


def _reference_chooser(sc, rng, eps):
    """Choose by the reference scores, drawing from the one-slot stream ``rng`` as
    :func:`cardenvs.core.policy.pick` does (``eps``: the chance of a uniform legal action at
    a decision with two or more)."""
    def choose(s, legal):
        k = len(legal)
        if k == 1:
            return legal[0]
        if eps > 0.0:
            u = rng_below(rng, 0, 1 << 30) / float(1 << 30)
            if u < eps:
                return legal[rng_below(rng, 0, k)]
        return legal[int(np.argmin(sc.scores(score_actions_reference, s, legal)))]
    return choose


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_rollouts_equal_reference_rollouts(name, eps):
    """VectorGame.rollout("heuristic") under a seed returns what playing every position out
    with the reference scorer (and the same random draws) returns, decision for decision."""
    game = cardenvs.make_game(name)
    sc = Scorer(game)
    states = np.array([s.copy() for s, _, d in random_decisions(game, 8, seed=31)
                       if d % 5 == 0])[:48]
    vg = VectorGame(game, len(states), observe=False, auto_reset=False)
    vg.load_states(states)
    ret = vg.rollout("heuristic", seed=13, epsilon=eps)
    lengths = vg.last_rollout_lengths.copy()
    streams = rollout_streams(13, len(states))
    for j, st in enumerate(states):
        r, d = replay(game, st, _reference_chooser(sc, streams[j:j + 1].copy(), eps))
        assert d == lengths[j], (j, d, lengths[j])
        assert np.array_equal(r, ret[j]), (j, r, ret[j])


@pytest.mark.parametrize("name", ["doudizhu", "niangniang", "wulong"])
def test_greedy_seats_score_alike_in_both_scorers_and_follow(name):
    """``greedy_params`` (the search's opponent model): both scorers agree bit for bit with
    every seat greedy, and a greedy seat follows where the policy passes: over a partner
    (the policy never beats one unless it goes out) and over an opponent's play it finds too
    costly to beat."""
    game = cardenvs.make_game(name)
    sc, gr = Scorer(game), Scorer(game)
    gr.pp = greedy_params(game, range(game.n_players))
    assert gr.pp[PP_GREEDY] == 2 ** game.n_players - 1 and sc.pp[PP_GREEDY] == 0
    T = game.pass_id
    n = follows = passes = greedy_passes = 0
    for s, legal, *_ in mixed_decisions(game, 10**6, seed=23):
        if len(legal) < 2:
            continue
        fast = gr.scores(score_actions, s, legal)
        ref = gr.scores(score_actions_reference, s, legal)
        assert np.array_equal(fast, ref), (n, legal, fast, ref)
        n += 1
        plain = [j for j, a in enumerate(legal) if a < T and game.tab.power[a] == 0]
        if T in legal and s[LAST_SEAT] != s[CUR] and plain:
            follows += 1
            passes += legal[int(np.argmin(sc.scores(score_actions, s, legal)))] == T
            greedy_passes += legal[int(np.argmin(ref))] == T
        if n >= 1500:
            break
    assert follows > 300, follows
    assert passes > 0.2 * follows, (passes, follows)  # the policy passes often ...
    assert greedy_passes < 0.05 * follows, (greedy_passes, follows)  # ... a greedy seat seldom
    with pytest.raises(ValueError, match="seat indices"):
        greedy_params(game, [game.n_players])
    if name == "doudizhu":  # the wild games' plays name no single lowest card
        _assert_greedy_choices(game, gr)


def _assert_greedy_choices(game, gr, n_decisions: int = 1500):
    """A greedy seat plays as a simple rule bot: it follows with the lowest plain play that
    beats (lowest key, then lowest kickers), and leads, unless it can go out at once, a
    combination without kickers that holds its lowest card."""
    from cardenvs.core.combos import AIRPLANE_PAIRS, AIRPLANE_SINGLES, TRIO_PAIR, TRIO_SINGLE

    tab, T = game.tab, game.pass_id
    kickers = (TRIO_SINGLE, TRIO_PAIR, AIRPLANE_SINGLES, AIRPLANE_PAIRS)
    rsum = gr.pp[PP_KINDS + gr.pp[PP_NA]:][:T]
    leads = follows = 0
    for s, legal, *_ in mixed_decisions(game, 10**6, seed=29):
        if len(legal) < 2 or (legal > T).any():
            continue
        hand = s[HDR + 16 * s[CUR]:HDR + 16 * s[CUR] + 16]
        if any(tab.ncards[a] >= hand.sum() for a in legal if a < T):
            continue  # going out comes first
        a = legal[int(np.argmin(gr.scores(score_actions, s, legal)))]
        if T in legal:
            plain = [b for b in legal if b < T and tab.power[b] == 0 and
                     tab.family[b] != ROCKET]
            if not plain:
                continue
            best = min(plain, key=lambda b: (tab.key[b], rsum[b]))
            assert (tab.key[a], rsum[a]) == (tab.key[best], rsum[best]), (s, legal, a, best)
            follows += 1
        else:
            low = int(np.flatnonzero(hand)[0])
            assert tab.counts[a, low] > 0, (s, a, low)
            assert tab.family[a] not in kickers, (s, a)
            leads += 1
        if leads + follows >= n_decisions:
            break
    assert leads > 200 and follows > 300, (leads, follows)
