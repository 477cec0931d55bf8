"""Determinization (cardenvs.core.infostate): observation equality, legal play-outs, exact
uniformity, and the fast kernel against a slow reference sampler.

For every game (and the option sets that change what is hidden) random positions of every
phase are drawn from random games; at each one a random observer's determinization must give
that observer exactly the same observation (``game.encode``), and must play to the end with
random legal moves (every move checked with ``is_legal``).  The per-card location frequencies
at fixed positions are compared (chi-square, fixed seeds) with exact hypergeometric
probabilities computed by hand, and with a slow, obviously correct Python sampler that deals
physical cards (tests/infostate_reference.py).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from numba import njit

import cardenvs
from cardenvs.core.infostate import (
    DrawOrder, FirstMarker, Linear, NotOnly, Subset, SuitFirst, Determinizer, _as_constraint,
)
from cardenvs.core.state import CUR, PHASE, P_DONE, hand_off, kitty_off
from cardenvs.games import niangniang as nn_mod
from cardenvs.games import wakeng as wk_mod
from cardenvs.games import paodekuai as pdk_mod
from cardenvs.games import wulong as wl_mod


#: games and option sets whose hiding differs, and the phases their random positions must
#: reach (doudizhu: auction, play; wakeng: + open, bury; niangniang: reveal, take, return,
#: joker picks; wulong: wilds picks)
PHASES = {"doudizhu": {0, 1}, "doudizhu4": {0, 1}, "wakeng": {0, 1, 4}, "niangniang": {1, 3, 4, 5},
          "wulong": {1, 3}, "paodekuai": {1}}
CASES = [
    ("doudizhu", {}),
    ("doudizhu", {"all_pass": "redeal"}),
    ("doudizhu4", {}),
    ("wakeng", {}),
    ("wakeng", {"open_hand": True, "reveal_kitty": True}),
    ("wakeng", {"open_hand": True}),
    ("niangniang", {}),
    ("niangniang", {"first_niangniang": "reveal_choice", "match": True, "target_score": 8}),
    ("wulong", {}),
    ("wulong", {"play_to_completion": True}),
    ("paodekuai", {}),
    ("paodekuai", {"first_play_has_lead_card": False, "deck": "15"}),
]

N_POSITIONS = 10_000


def _case_id(case):
    name, opts = case
    return name + "".join(f"-{k}={v}" for k, v in opts.items())


@njit(cache=False)
def _playouts(k_legal, k_is_legal, k_step, tab, opts, states, seed, buf):
    """Play every row to the end with uniformly random legal moves; -1 when a row offers no
    legal action, -2 when a chosen action fails ``is_legal``, -3 past 100,000 moves; else the
    number of moves played."""
    g = np.empty(1, np.int64)
    g[0] = seed
    total = 0
    for i in range(states.shape[0]):
        s = states[i]
        n = 0
        while s[PHASE] != P_DONE:
            k = k_legal(s, tab, opts, buf)
            if k <= 0:
                return -1
            g[0] = g[0] * 6364136223846793005 + 1442695040888963407
            a = buf[(g[0] >> 33) % k]
            if not k_is_legal(s, a, tab, opts):
                return -2
            k_step(s, a, tab, opts)
            n += 1
            if n > 100_000:
                return -3
        total += n
    return total


def random_positions(game, n: int, seed: int):
    """``n`` (state, observer) pairs from random games: every decision of the games, a random
    observer at each (the observer is the seat to move half of the time)."""
    rng = np.random.default_rng(seed)
    s = game.new_state()
    buf = np.empty(game.n_actions + 1, np.int64)
    out = []
    while len(out) < n:
        game.reset(s, int(rng.integers(2**62)))
        while not game.done(s) and len(out) < n:
            seat = game.current(s) if rng.random() < 0.5 else int(rng.integers(game.n_players))
            out.append((s.copy(), seat))
            k = game.legal(s, buf)
            game.step(s, int(buf[rng.integers(k)]))
    return out


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_observation_equal_and_plays_out(case):
    name, opts = case
    game = cardenvs.make_game(name, **opts)
    rng = np.random.default_rng(1)
    pos = random_positions(game, N_POSITIONS, seed=2)
    o1 = np.zeros(game.layout.size, np.float32)
    o2 = np.zeros(game.layout.size, np.float32)
    samples = np.empty((len(pos), game.state_size), np.int64)
    phases = Counter()
    for i, (s, seat) in enumerate(pos):
        x = Determinizer(game, s, seat).sample(rng)
        game.encode(s, seat, o1)
        game.encode(x, seat, o2)
        if not np.array_equal(o1, o2):
            bad = np.flatnonzero(o1 != o2)
            names = sorted({f.name for f in game.layout.fields
                            for j in bad if game.layout.offsets[f.name][0] <= j
                            < game.layout.offsets[f.name][1]})
            raise AssertionError(f"position {i} (phase {int(s[PHASE])}, seat {seat}): "
                                 f"observation differs in {names}\n{game.render(s)}\n"
                                 f"{game.render(x)}")
        # the cards are conserved: the sampled state holds the same deck
        assert _card_total(game, x) == _card_total(game, s)
        samples[i] = x
        phases[int(s[PHASE])] += 1
        for f in _features(name, s, seat):
            phases[f] += 1
    want = set(PHASES[name])
    if opts.get("first_niangniang") == "reveal_choice":
        want.add(0)
    if opts.get("open_hand"):
        want |= {3, "open hand"}
    want |= {"niangniang": {"stuck seat", "hidden joker pick", "catcher"},
             "wulong": {"declared seat", "failed seat", "hidden wilds pick"},
             "wakeng": {"farmer after burying"}}.get(name, set())
    assert want <= set(phases), (sorted(map(str, want - set(phases))), phases)
    buf = np.empty(game.n_actions + 1, np.int64)
    moves = _playouts(game.k_legal, game.k_is_legal, game.k_step, game.tab, game.opts,
                      samples, 7, buf)
    assert moves > 0, {-1: "no legal action", -2: "illegal move", -3: "endless"}.get(moves)
    # every count stayed non-negative through the play-outs
    n = game.n_players
    assert samples[:, hand_off(0):kitty_off(n) + 16 + 16 * n].min() >= 0


def _features(name, s, seat):
    """Names of the special situations of a position (for the coverage assertion)."""
    out = []
    cur = int(s[CUR])
    if name == "niangniang":
        if any(cardenvs.make_game("niangniang").stuck(s)):
            out.append("stuck seat")
        if s[PHASE] == nn_mod.P_JOKER and cur != seat:
            out.append("hidden joker pick")
        if s[PHASE] in (nn_mod.P_TAKE, nn_mod.P_RETURN) and seat != s[nn_mod.LANDLORD]:
            out.append("catcher")
    elif name == "wulong":
        if s[wl_mod.X_DECL:wl_mod.X_DECL + 4].any():
            out.append("declared seat")
        if (s[wl_mod.X_STATUS:wl_mod.X_STATUS + 4] == wl_mod.ST_FAILED).any():
            out.append("failed seat")
        if s[PHASE] == wl_mod.P_WILD and cur != seat:
            out.append("hidden wilds pick")
    elif name == "wakeng":
        if s[wk_mod.A_OPEN] == 1:
            out.append("open hand")
        if s[PHASE] == wk_mod.P_PLAY and seat != s[wk_mod.LANDLORD]:
            out.append("farmer after burying")
    return out


def _card_total(game, s):
    n = game.n_players
    return int(s[hand_off(0):kitty_off(n) + 16 + 16 * n].sum())


# -- exact uniformity at fixed positions --------------------------------------------------------


def _chi2_crit(df: int, z: float = 3.719) -> float:
    """Upper quantile of chi-square with ``df`` degrees of freedom (Wilson-Hilferty; z = 3.719
    is the 1e-4 upper normal quantile)."""
    a = 2.0 / (9.0 * df)
    return df * (1.0 - a + z * math.sqrt(a)) ** 3


def _chi2(observed: np.ndarray, expected: np.ndarray) -> tuple[float, int]:
    """Chi-square statistic over cells with expected count >= 5 (the rest pooled)."""
    big = expected >= 5
    obs = list(observed[big]) + [observed[~big].sum()]
    exp = list(expected[big]) + [expected[~big].sum()]
    if exp[-1] < 5:
        obs[-2] += obs.pop()
        exp[-2] += exp.pop()
    obs, exp = np.array(obs, float), np.array(exp, float)
    return float(((obs - exp) ** 2 / exp).sum()), len(obs) - 1


def _hypergeom(N: int, K: int, n: int) -> np.ndarray:
    """P(k of K marked cards among n drawn from N), k = 0..min(K, n)."""
    return np.array([math.comb(K, k) * math.comb(N - K, n - k) / math.comb(N, n)
                     for k in range(min(K, n) + 1)])


def _check_counts(samples: np.ndarray, off: int, r: int, N: int, K: int, n: int, base: int = 0):
    """The count of rank ``r`` at ``off`` minus ``base`` follows hypergeometric(N, K, n)."""
    p = _hypergeom(N, K, n)
    got = np.bincount(samples[:, off + r] - base, minlength=len(p))
    assert len(got) == len(p), f"impossible count {len(got) - 1} > {len(p) - 1}"
    if (p * len(samples) >= 5).sum() < 2:
        assert got[np.argmax(p)] >= len(samples) - 5 * len(p) or len(p) == 1
        return
    stat, df = _chi2(got, p * len(samples))
    assert stat < _chi2_crit(df), (stat, df, got, p * len(samples))


HANDS = ["3334445556667778B", "88899TTTJJJQQQKKK", "AAAA2222R99TJQ567"]  # kitty 34K


def test_doudizhu_auction_marginals():
    """In the auction the 37 unseen cards are dealt 17 / 17 / 3: the count of each rank in the
    kitty and in the next hand is hypergeometric."""
    g = cardenvs.make_game("doudizhu")
    s = g.new_state()
    g.custom_deal(s, {"hands": HANDS}, 0)
    x = Determinizer(g, s, 0).batch(np.random.default_rng(3), 20_000)
    own = s[hand_off(0):hand_off(0) + 16]
    full = g.deck.full_counts()
    for r in range(15):
        K = int(full[r] - own[r])
        _check_counts(x, kitty_off(3), r, 37, K, 3)
        _check_counts(x, hand_off(1), r, 37, K, 17)


def test_doudizhu_shown_kitty_stays_with_the_landlord():
    """After the auction the shown kitty is in the landlord's hand (less what he played); the
    rest of his hand is a hypergeometric draw of the other unseen cards."""
    g = cardenvs.make_game("doudizhu")
    s = g.new_state()
    g.custom_deal(s, {"hands": HANDS, "kitty": "34K", "landlord": 1, "bid": 3}, 0)
    x = Determinizer(g, s, 0).batch(np.random.default_rng(4), 20_000)
    own = s[hand_off(0):hand_off(0) + 16]
    kit = s[kitty_off(3):kitty_off(3) + 16]
    full = g.deck.full_counts()
    for r in range(15):
        K = int(full[r] - own[r] - kit[r])  # unseen and not known: 34 cards, 17 to seat 1
        _check_counts(x, hand_off(1), r, 34, K, 17, base=int(kit[r]))
    assert np.all(x[:, hand_off(1):hand_off(1) + 16] >= kit)


# -- the fast kernel against the slow reference ---------------------------------------------------


def _location_table(game, samples, decl_offsets):
    """Counts of (place, rank, count) over samples."""
    rows = []
    for off in decl_offsets:
        rows.append(samples[:, off:off + 16])
    return np.stack(rows, 1)  # (m, places, 16)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_fast_matches_reference(case):
    """At a few random positions per game, the distribution of every (place, rank) count
    under the numba kernel equals the slow reference's (two-sample chi-square)."""
    name, opts = case
    game = cardenvs.make_game(name, **opts)
    pos = random_positions(game, 3000, seed=11)
    rng = np.random.default_rng(12)
    groups = {}
    for s, seat in pos:  # one random position of each phase and special situation
        for key in [int(s[PHASE])] + _features(name, s, seat):
            groups.setdefault(key, []).append((s, seat))
    picks = [v[int(rng.integers(len(v)))] for _, v in sorted(groups.items(), key=str)]
    for s, seat in picks:
        d = Determinizer(game, s, seat)
        offs = [p.offset for p in d.decl.piles] + [r.offset for r in d.decl.records]
        fast = d.batch(np.random.default_rng(13), 1200)
        slow = reference_batch(game, s, seat, np.random.default_rng(14), 600)
        _same_distribution(fast, slow, offs + [m.slot - 10**9 for m in d.decl.markers])


def _same_distribution(a: np.ndarray, b: np.ndarray, offs):
    for off in offs:
        if off < 0:  # a marker slot
            slot = off + 10**9
            cols = [(slot, 0)]
        else:
            cols = [(off + r, 0) for r in range(16)]
        for c, _ in cols:
            va, vb = a[:, c], b[:, c]
            vals = np.union1d(va, vb)
            if len(vals) < 2:  # one value in both samples
                continue
            ca = np.array([(va == v).sum() for v in vals], float)
            cb = np.array([(vb == v).sum() for v in vals], float)
            tot = ca + cb
            keep = tot >= 10
            if keep.sum() < 2:
                continue
            ca, cb, tot = ca[keep], cb[keep], tot[keep]
            ea = tot * ca.sum() / tot.sum()
            eb = tot * cb.sum() / tot.sum()
            stat = float(((ca - ea) ** 2 / ea).sum() + ((cb - eb) ** 2 / eb).sum())
            df = len(tot) - 1
            assert stat < _chi2_crit(df, 4.265), (c, stat, df, ca, cb)


# -- the slow reference sampler ------------------------------------------------------------------


def reference_sample(game, state, seat, rng, constraint=None, tries=100_000):
    """One determinization dealt with physical cards in plain Python, by rejection.

    Read from the same declaration (``game.hidden``) as the kernel, but sampled the obvious
    way: the unseen physical cards (each copy of a rank its own card) less the ones known to
    be in a pile are permuted and dealt in turn into the free slots of the piles in the order
    declared; a sample with a card where its pile may not hold it is drawn again; a group's
    cards are permuted and split; each record is a uniform choice of physical cards; each
    marker a uniform choice among the physical cards of its rank; checks reject.
    """
    decl = game.hidden(state, seat)
    cons = _as_constraint(constraint)
    full = (1 << 16) - 1
    user = {}
    for q, cards in dict(cons.exclude).items():
        user[q] = full & ~sum(1 << int(r) for r in np.flatnonzero(game.deck.parse(cards)))
    units, order = {}, []
    for p in decl.piles:
        key = p.group if p.group is not None else "#" + p.name
        if key not in units:
            units[key] = []
            order.append(key)
        units[key].append(p)
    pool = []
    for p in decl.piles:
        for r in range(16):
            pool += [r] * int(state[p.offset + r])
    for p in decl.piles:
        if p.known is not None:
            for r in range(16):
                for _ in range(int(p.known[r])):
                    pool.remove(r)
    buf = np.empty(game.n_actions + 1, np.int64)
    for _ in range(tries):
        s = state.copy()
        perm = [pool[i] for i in rng.permutation(len(pool))]
        ok = True
        for key in order:
            ps = units[key]
            content = []
            for p in ps:
                if p.known is not None:
                    content += [r for r in range(16) for _ in range(int(p.known[r]))]
            free = sum(p.size for p in ps) - len(content)
            drawn, perm = perm[:free], perm[free:]
            content += drawn
            for p in ps:
                m = p.mask & user.get(p.seat, full)
                if any(not (m >> r) & 1 for r in drawn):
                    ok = False
            content = [content[i] for i in rng.permutation(len(content))]
            for p in ps:
                part, content = content[:p.size], content[p.size:]
                s[p.offset:p.offset + 16] = np.bincount(part, minlength=16)[:16]
        if not ok:
            continue
        for rec in decl.records:
            if isinstance(rec, Subset):
                cards = [r for off in rec.sources for r in range(16)
                         for _ in range(int(s[off + r])) if (rec.mask >> r) & 1]
                if len(cards) < rec.k:
                    ok = False
                    break
                pick = [cards[i] for i in rng.choice(len(cards), rec.k, replace=False)]
                s[rec.offset:rec.offset + 16] = np.bincount(pick, minlength=16)[:16]
            else:
                v = sum(sign * s[off:off + 16] for sign, off in rec.terms)
                if np.any(v < 0):
                    ok = False
                    break
                s[rec.offset:rec.offset + 16] = v
        if not ok:
            continue
        for m in decl.markers:
            cards = [code for code, offs in m.places for off in offs
                     for _ in range(int(s[off + m.rank]))]
            if not cards:
                ok = False
                break
            s[m.slot] = cards[int(rng.integers(len(cards)))]
        for c in decl.checks:
            if isinstance(c, NotOnly):
                h = s[c.offset:c.offset + 16]
                if h.sum() > 0 and all((c.mask >> r) & 1 for r in range(16) if h[r]):
                    ok = False
            elif isinstance(c, FirstMarker):
                first = next((int(s[c.base + r]) for r in c.ranks
                              if 0 <= s[c.base + r] < c.n), -1)
                if first != c.expected:
                    ok = False
            elif isinstance(c, SuitFirst):
                holder = -2
                for r in c.ranks:
                    # one entry per physical copy of rank r: the index of its deal-time place
                    copies = [w for w, (_, offs) in enumerate(c.places) for off in offs
                              for _ in range(int(s[off + r]))]
                    where = c.marker_places.get(int(s[c.base + r]))
                    if where is not None:
                        cand = [i for i, w in enumerate(copies) if w in where]
                        if not cand:
                            ok = False
                            break
                        copies.pop(cand[int(rng.integers(len(cand)))])
                    w = copies[int(rng.integers(len(copies)))]
                    if c.places[w][0] >= 0:
                        holder = c.places[w][0]
                        break
                if holder != c.expected:
                    ok = False
        for d in decl.draws:
            for _ in range(100_000):
                start = int(rng.integers(d.n))
                deck = [1] * d.n_marked + [0] * (d.n_cards - d.n_marked)
                deck = [deck[i] for i in rng.permutation(d.n_cards)]
                who = [(start + i) % d.n for i, c in enumerate(deck) if c]
                if all(who[t] == s[d.base + t] for t in range(d.n_known)):
                    s[d.base:d.base + d.n_marked] = who
                    break
        if not ok:
            continue
        if decl.repair is not None and not decl.repair(s):
            continue
        if decl.choice and game.legal(s, buf) < 2:
            continue
        if decl.legal_passes and not _replays(game, state, s):  # Pao De Kuai's must-beat passes
            continue
        if cons.accept is not None and not cons.accept(s):
            continue
        return s
    raise RuntimeError("reference sampler: no sample accepted")


def reference_batch(game, state, seat, rng, n, constraint=None):
    return np.stack([reference_sample(game, state, seat, rng, constraint) for _ in range(n)])


# -- bad input ---------------------------------------------------------------------------------------


def test_bad_input():
    g = cardenvs.make_game("doudizhu")
    s = g.new_state()
    g.reset(s, 0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="out of range"):
        cardenvs.determinize(g, s, 3, rng)
    with pytest.raises(TypeError, match="seat"):
        cardenvs.determinize(g, s, 1.0, rng)
    with pytest.raises(TypeError, match="Generator"):
        cardenvs.determinize(g, s, 0, 0)
    with pytest.raises(TypeError):
        cardenvs.determinize(g, s.astype(np.int32), 0, rng)
    with pytest.raises(ValueError, match="entries"):
        cardenvs.determinize(cardenvs.make_game("doudizhu4"), s, 0, rng)
    with pytest.raises(TypeError, match="Game"):
        cardenvs.determinize(object(), s, 0, rng)
    done = s.copy()
    done[PHASE] = P_DONE
    with pytest.raises(ValueError, match="finished"):
        cardenvs.determinize(g, done, 0, rng)
    with pytest.raises(ValueError, match="unknown card"):
        cardenvs.determinize(g, s, 0, rng, constraint={1: "X"})
    with pytest.raises(TypeError, match="constraint"):
        cardenvs.determinize(g, s, 0, rng, constraint=5)
    with pytest.raises(ValueError, match="n must"):
        cardenvs.determinize_batch(g, s, 0, rng, -1)


def test_constraint_hooks():
    """An exclusion mask keeps the excluded ranks out of that hand (the rest still uniform:
    its marginals are hypergeometric over the allowed cards); a callable rejects."""
    g = cardenvs.make_game("doudizhu")
    s = g.new_state()
    g.custom_deal(s, {"hands": HANDS}, 0)
    x = cardenvs.determinize_batch(g, s, 0, np.random.default_rng(5), 20_000,
                                   constraint={2: "R2"})
    R, two = g.deck.index("R"), g.deck.index("2")
    assert x[:, hand_off(2) + R].sum() == 0 and x[:, hand_off(2) + two].sum() == 0
    # seat 2 draws 17 of the 37 - 5 = 32 unseen cards that are not R or 2
    own = s[hand_off(0):hand_off(0) + 16]
    full = g.deck.full_counts()
    for r in range(13):
        if r == two:
            continue
        _check_counts(x, hand_off(2), r, 32, int(full[r] - own[r]), 17)
    y = cardenvs.determinize_batch(g, s, 0, np.random.default_rng(6), 200,
                                   constraint=lambda st: st[hand_off(1) + R] == 1)
    assert np.all(y[:, hand_off(1) + R] == 1)
    with pytest.raises(RuntimeError, match="constraint"):
        cardenvs.determinize(g, s, 0, np.random.default_rng(0), constraint=lambda st: False)


def test_deterministic_under_seed():
    g = cardenvs.make_game("doudizhu")
    s = g.new_state()
    g.reset(s, 9)
    a = cardenvs.determinize_batch(g, s, 1, np.random.default_rng(42), 50)
    b = cardenvs.determinize_batch(g, s, 1, np.random.default_rng(42), 50)
    assert np.array_equal(a, b)
    assert len({row.tobytes() for row in a}) == 50


def test_wakeng_revealed_kitty_and_burial_marginals():
    """reveal_kitty, two cards buried: the digger's hand and burial (18 + 2 cards) hold the 4
    shown kitty cards and 16 of the 32 other unseen cards (hypergeometric); the 2 buried cards
    are a uniform pair of those 20.  The exact law of the count of a rank in the burial is the
    hypergeometric mixture computed here by hand."""
    hands = ["444455556666777A", "88889999TTTTJJJA", "QQQQKKKK22223AA3"]  # kitty: 7J33
    g = cardenvs.make_game("wakeng", reveal_kitty=True)
    s = g.new_state()
    g.custom_deal(s, {"hands": hands, "digger": 0, "bid": 2, "leader": 0}, 0)
    g.step(s, g.string_to_action("bury 4"))
    g.step(s, g.string_to_action("bury 7"))
    x = Determinizer(g, s, 1).batch(np.random.default_rng(8), 20_000)
    own = s[hand_off(1):hand_off(1) + 16]
    kit = s[kitty_off(3):kitty_off(3) + 16]
    full = g.deck.full_counts()
    buried = wk_mod.BURIED
    for r in range(13):
        K = int(full[r] - own[r] - kit[r])
        # the group's count of rank r: kitty + hypergeometric(32, K, 16)
        pg = _hypergeom(32, K, 16)
        law = np.zeros(3)
        for extra, pe in enumerate(pg):
            gcount = int(kit[r]) + extra
            pb = _hypergeom(20, gcount, 2)
            law[:len(pb)] += pe * pb
        law = law[:max(1, min(2, int(kit[r]) + K) + 1)]
        got = np.bincount(x[:, buried + r], minlength=len(law))
        assert len(got) == len(law)
        if (law * len(x) >= 5).sum() >= 2:
            stat, df = _chi2(got, law * len(x))
            assert stat < _chi2_crit(df), (r, got, law * len(x))
        both = x[:, buried + r] + x[:, hand_off(0) + r]
        assert np.all(both >= kit[r])
        _check_counts(x, hand_off(2), r, 32, K, 16)


def test_niangniang_catcher_marginals_and_stuck_joker():
    """A catcher during the exchange: the bottom (12 cards after two takes) is a
    hypergeometric draw of his 44 unseen cards.  A stuck seat holds B or R with the
    proportion of the unseen jokers."""
    g = cardenvs.make_game("niangniang")
    s = g.new_state()
    hands = ["3333444455", "5566667777", "88889999TT", "TTJJJJQQQQ"]
    g.custom_deal(s, {"hands": hands, "niangniang": 0}, 0)
    g.step(s, g.string_to_action("take B"))
    g.step(s, g.string_to_action("take K"))
    x = Determinizer(g, s, 1).batch(np.random.default_rng(9), 20_000)
    own = s[hand_off(1):hand_off(1) + 16]
    full = g.deck.full_counts()
    for r in range(15):
        _check_counts(x, kitty_off(4), r, 44, int(full[r] - own[r]), 12)
    # the taken record is a uniform 2-subset of the 娘娘's 12 cards
    taken = x[:, nn_mod.X_TAKEN:nn_mod.X_TAKEN + 16]
    assert np.all(taken.sum(1) == 2) and np.all(taken <= x[:, hand_off(0):hand_off(0) + 16])
    # a stuck seat, from random games
    pos = random_positions(g, 20_000, seed=21)
    found = 0
    for st, seat in pos:
        stuck = g.stuck(st)
        qs = [q for q in range(4) if stuck[q] and q != seat]
        if not qs or found >= 2:
            continue
        q = qs[0]
        seen = st[hand_off(seat):hand_off(seat) + 16].copy()
        for p in range(4):
            seen += st[nn_mod.played_off(4, p):nn_mod.played_off(4, p) + 16]
        if seat == st[nn_mod.LANDLORD]:
            seen += st[kitty_off(4):kitty_off(4) + 16]
        nb, nr = 1 - int(seen[nn_mod.JB]), 1 - int(seen[nn_mod.JR])
        if nb + nr < 2:
            continue
        found += 1
        y = Determinizer(g, st, seat).batch(np.random.default_rng(10), 4000)
        hb = y[:, hand_off(q) + nn_mod.JB]
        assert np.all(hb + y[:, hand_off(q) + nn_mod.JR] == 1)
        stat, df = _chi2(np.bincount(hb, minlength=2), np.array([2000.0, 2000.0]))
        assert stat < _chi2_crit(df)
    assert found >= 1


def test_wulong_declared_hand_stays_and_others_are_hypergeometric():
    g = cardenvs.make_game("wulong")
    s = g.new_state()
    g.set_position(s, ["456789TJQ", "KKAA22BR", "3456677", "333"], to_move=0, declared=[2])
    x = Determinizer(g, s, 0).batch(np.random.default_rng(11), 20_000)
    assert np.all(x[:, hand_off(2):hand_off(2) + 16] == s[hand_off(2):hand_off(2) + 16])
    assert np.all(x[:, hand_off(3):hand_off(3) + 16] == s[hand_off(3):hand_off(3) + 16])
    seen = sum(s[hand_off(q):hand_off(q) + 16] for q in (0, 2, 3))
    full = g.deck.full_counts()
    for r in range(15):
        _check_counts(x, hand_off(1), r, 89, int(full[r] - seen[r]), 8)


def test_wakeng_first_bidder_rule_informs_the_threes():
    """The ♠3 holder bids first.  Seat 1 holds three 3s (♦3 among them: it sees its diamond,
    not its other suits); the fourth 3 is with seat 0, seat 2 or in the kitty (16/36 for
    seat 0 without the rule).  Seat 0 bidding first means the ♠3 is that fourth 3 and it is
    seat 0's, unless it is in the kitty and the ♠4 rule named seat 0: P >= 16 / (16 + 4)."""
    g = cardenvs.make_game("wakeng")
    s = g.new_state()
    hands = ["S3 S4 H4 C4 D4 S5 H5 C5 D5 S6 H6 C6 D6 S7 H7 C7",
             "H3 C3 D3 D7 S8 H8 C8 D8 S9 H9 C9 D9 ST HT CT DT",
             "SJ HJ CJ DJ SQ HQ CQ DQ SK HK CK DK SA HA CA DA"]
    g.custom_deal(s, {"hands": hands}, 0)
    assert int(s[wk_mod.FIRST]) == 0
    x = Determinizer(g, s, 1).batch(np.random.default_rng(15), 20_000)
    three = g.deck.index("3")
    p = (x[:, hand_off(0) + three] == 1).mean()
    assert p > 0.78, p
    # the reference sampler agrees
    y = reference_batch(g, s, 1, np.random.default_rng(16), 2000)
    q = (y[:, hand_off(0) + three] == 1).mean()
    assert abs(p - q) < 4 * math.sqrt(p * (1 - p) / 2000), (p, q)


def test_paodekuai_first_leader_held_the_lead_card():
    """Pao De Kuai: the seat that led first held ♠3.  Before any play (with
    ``first_play_has_lead_card=False``, so nothing played shows it), a determinization gives
    him k of the u threes the observer does not hold with probability proportional to
    k * P_prior(k) (hypergeometric over the 32 unseen cards): the ♠3 is one of his k."""
    g = cardenvs.make_game("paodekuai", first_play_has_lead_card=False)
    s = g.new_state()
    cards = [f"{s}{r}" for r in "456789TJQK" for s in "SHCD"] + ["HA", "CA", "DA", "S2"]
    hands = [["H3"] + cards[0:15], ["S3"] + cards[15:30], ["C3", "D3"] + cards[30:44]]
    g.custom_deal(s, {"hands": [" ".join(h) for h in hands]}, 0)
    assert int(s[CUR]) == 1 and int(s[pdk_mod.A_SUITED]) == 1
    u = 3  # the observer (seat 0) holds one 3
    prior = np.array([math.comb(u, k) * math.comb(32 - u, 16 - k) for k in range(u + 1)], float)
    post = prior * np.arange(u + 1)
    post /= post.sum()
    rng = np.random.default_rng(5)
    n = 3000
    rows = cardenvs.determinize_batch(g, s, 0, rng, n)
    ks = rows[:, hand_off(1)]
    assert ks.min() >= 1
    stat, df = _chi2(np.bincount(ks, minlength=u + 1).astype(float), post * n)
    assert stat < _chi2_crit(df), (np.bincount(ks), post * n)


def _replays(game, s, row) -> bool:
    """Whether ``row``'s hands could have been dealt: each seat's hand plus the cards it played
    (the deal), dealt again without suits to the same first leader, replays every logged
    action legally (``is_legal``) -- the slow, plain consistency test of a Pao De Kuai sample."""
    from cardenvs.core.state import NLOG, PLAY_START, log_entry, played_off

    n = game.n_players
    deal = [game.deck.format(row[hand_off(q):hand_off(q) + 16]
                             + row[played_off(n, q):played_off(n, q) + 16]) for q in range(n)]
    t = game.new_state()
    game.custom_deal(t, {"hands": deal, "leader": int(s[pdk_mod.A_LEADER])}, 0)
    for i in range(int(s[PLAY_START]), int(s[NLOG])):
        a = int(log_entry(s, n, i)) // 8
        if not game.is_legal(t, a):
            return False
        game.step(t, a)
    return True


def test_paodekuai_must_beat_passes_shape_the_hidden_hands():
    """Under ``must_beat`` a pass tells that the passer held no play beating the play to beat.
    At a late position of an unsuited deal (a few cards in each hidden hand, several such
    passes, some splits of the unseen cards ruled out by them), the determinizer's law of seat
    1's hand is the exact law: every split of the unseen physical cards between seats 1 and 2
    whose deal replays the logged actions legally (:func:`_replays`), equally likely.  Brute
    force over the splits; chi-square over 3,000 samples; every sample replays and gives the
    observer its own observation.  With ``must_beat=False`` every split is possible again."""
    import itertools

    for must in (True, False):
        g = cardenvs.make_game("paodekuai", must_beat=must)
        deck = g.deck
        cards = np.repeat(np.arange(deck.n_ranks), deck.copies)
        rng = np.random.default_rng(1)
        buf = np.empty(g.n_actions + 1, np.int64)
        s = None
        while s is None:  # a random unsuited deal played at random down to 7 hidden cards
            perm = rng.permutation(cards)
            t = g.new_state()
            g.custom_deal(t, {"hands": [deck.format(np.bincount(perm[16 * i:16 * i + 16],
                                                                minlength=16)) for i in range(3)],
                              "leader": int(rng.integers(3))}, 0)
            while not g.done(t):
                sizes = [int(t[hand_off(q):hand_off(q) + 16].sum()) for q in range(3)]
                if sizes[1] + sizes[2] <= 7 and min(sizes) > 0 and int(t[CUR]) == 0:
                    s = t
                    break
                g.step(t, int(buf[rng.integers(g.legal(t, buf))]))
        u = s[hand_off(1):hand_off(1) + 16] + s[hand_off(2):hand_off(2) + 16]
        n1 = int(s[hand_off(1):hand_off(1) + 16].sum())
        law = {}
        splits = []
        for c in itertools.product(*[range(int(x) + 1) for x in u]):
            c1 = np.array(c, np.int64)
            if c1.sum() != n1:
                continue
            row = s.copy()
            row[hand_off(1):hand_off(1) + 16] = c1
            row[hand_off(2):hand_off(2) + 16] = u - c1
            splits.append(row)
            if _replays(g, s, row):
                law[tuple(c)] = math.prod(math.comb(int(u[r]), int(c[r])) for r in range(16))
        checks = Determinizer(g, s, 0).passes
        assert (checks is not None) == must
        if must:  # the kernel and the plain check agree with the replay on every split
            fast = checks.ok_batch(np.array(splits))
            for row, f in zip(splits, fast):
                want = tuple(row[hand_off(1):hand_off(1) + 16]) in law
                assert bool(f) == checks.ok(row) == want
        total = math.comb(int(u.sum()), n1)
        if must:  # the passes rule splits out (else the test would show nothing)
            assert sum(law.values()) < total
        else:
            assert sum(law.values()) == total
        n = 3000
        rows = cardenvs.determinize_batch(g, s, 0, np.random.default_rng(7), n)
        got = Counter(tuple(r[hand_off(1):hand_off(1) + 16].tolist()) for r in rows)
        assert set(got) <= set(law), set(got) - set(law)
        keys = sorted(law)
        w = np.array([law[k] for k in keys], float)
        stat, df = _chi2(np.array([got[k] for k in keys], float), w / w.sum() * n)
        assert df >= 1 and stat < _chi2_crit(df), (stat, df)
        obs = np.zeros(g.layout.size, np.float32)
        mine = np.zeros(g.layout.size, np.float32)
        g.encode(s, 0, mine)
        for r in rows[:200]:
            assert _replays(g, s, r)
            g.encode(r, 0, obs)
            assert np.array_equal(obs, mine)
