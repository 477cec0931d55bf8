"""Issue 51, rules items: the query helper applies the env's legality code (7), play tables hold
no row longer than the largest hand (8), and a state leaving the seat to move no legal action
is refused before anything is written (14)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cardenvs import legal_moves, make_game
from cardenvs.core.combos import FAMILY_NAMES
from cardenvs.core.state import CUR, LAST_ROW, LAST_SEAT, NLOG, PHASE, PLAY_START, P_PLAY, hand_off
from cardenvs.registry import REGISTRY

GAMES = sorted(REGISTRY)
WILD = {"niangniang", "wulong"}  # games whose query lists realisations; plain=True: the rows


# -- 7: legal_moves is the env's legal set ---------------------------------------------------------


def test_paodekuai_short_rows_only_as_the_whole_hand():
    assert legal_moves("paodekuai", "5553") == ["3", "5", "55", "3555"]
    assert legal_moves("paodekuai", "555") == ["5", "55", "555"]
    assert legal_moves("paodekuai", "666789", "555+34") == ["66678", "66679", "66689"]
    assert legal_moves("paodekuai", "6667", "555+34") == ["6667"]
    # an airplane with fewer than its kickers: only as the whole hand
    assert "555666+7" not in legal_moves("paodekuai", "5556667")
    assert "5556667" in legal_moves("paodekuai", "5556667")
    assert "555666" not in legal_moves("paodekuai", "55566678")
    # the option that turns the relaxation off
    assert legal_moves("paodekuai", "5553", short_finish=False) == ["3", "5", "55"]


def _play_position(g, rng, seat_cards_min: int = 2, lead: bool = False):
    """A play-phase state of ``g`` after at least one play-phase action (so no first-play rule
    binds) where every seat holds ``seat_cards_min`` cards or more (no one-card 下家 rule) and,
    in Wulong, the seat to move has not declared; with ``lead``, a free lead."""
    s = g.new_state()
    buf = np.empty(g.n_actions, np.int64)
    while True:
        g.reset(s, int(rng.integers(2**62)))
        steps = int(rng.integers(1, 8))
        while not g.done(s):
            if (s[PHASE] == P_PLAY and s[NLOG] > s[PLAY_START] and steps <= 0
                    and _free_seat(g, s, seat_cards_min) and (not lead or s[LAST_ROW] < 0)):
                return s
            if s[PHASE] == P_PLAY and s[NLOG] > s[PLAY_START]:
                steps -= 1
            k = g.legal(s, buf)
            g.step(s, int(buf[rng.integers(k)]))


def _free_seat(g, s, seat_cards_min: int) -> bool:
    if any(s[hand_off(i):hand_off(i) + 16].sum() < seat_cards_min for i in range(g.n_players)):
        return False
    if g.info.name == "wulong":
        from cardenvs.games.wulong import X_DECL

        return s[X_DECL + s[CUR]] == 0
    return True


def _random_query(g, rng, max_hand: int):
    """A hand of 1..``max_hand`` cards and a play to beat: ``None``, any row the rest of the
    deck makes (short rows included), or a legal free lead of another hand from the rest."""
    deck = np.repeat(np.arange(16), g.deck.full_counts())
    rng.shuffle(deck)
    n = int(rng.integers(1, max_hand + 1)) if rng.random() < 0.6 else int(rng.integers(1, 7))
    hand = np.bincount(deck[:n], minlength=16).astype(np.int64)
    if rng.random() < 0.3:
        return hand, -1
    if rng.random() < 0.4:
        rest = g.deck.full_counts() - hand
        rows = np.flatnonzero((g.tab.counts <= rest).all(axis=1))
        return hand, int(rows[rng.integers(len(rows))])
    other = np.bincount(deck[n:n + max_hand], minlength=16).astype(np.int64)
    out = np.empty(len(g.table), np.int64)
    from cardenvs.api import _move_generator

    k = _move_generator(g.info.name)(other, np.int64(-1), g.tab, g.opts, out)
    return hand, int(out[rng.integers(k)])


@pytest.mark.parametrize("game", GAMES)
def test_legal_moves_equals_the_env_legal_set(game):
    """For random hands and plays to beat, :func:`cardenvs.legal_moves` (the hand is the whole
    hand) lists exactly the card sets of the play rows the env's ``legal`` offers the seat to
    move holding that hand, the play to beat set, at a constructed position."""
    g = make_game(game)
    rng = np.random.default_rng(51)
    max_hand = largest_hand(g)
    buf = np.empty(g.n_actions, np.int64)
    checked = nonempty = 0
    for _ in range(6):
        base = _play_position(g, rng)
        for _ in range(40):
            hand, prev = _random_query(g, rng, max_hand)
            s = base.copy()
            seat = int(s[CUR])
            s[hand_off(seat):hand_off(seat) + 16] = hand
            s[LAST_ROW] = prev
            s[LAST_SEAT] = (seat + 1) % g.n_players
            k = g.legal(s, buf)
            env = sorted({g.deck.format(g.tab.counts[a]) for a in buf[:k] if a < len(g.table)},
                         key=lambda x: (len(x), [g.deck.order.index(c) for c in x]))
            kw = {"plain": True} if game in WILD else {}
            prev_text = None if prev < 0 else g.table.row_string(prev)
            kind = None if prev < 0 else FAMILY_NAMES[int(g.tab.family[prev])]
            got = legal_moves(game, g.deck.format(hand), prev_text, prev_type=kind, **kw)
            assert sorted(got) == sorted(env), (game, g.deck.format(hand), prev_text)
            checked += 1
            nonempty += bool(env)
    assert checked == 240 and nonempty > 100


# -- 8: no play row longer than the largest hand ---------------------------------------------------

#: every option that changes a game's play table, with each of its values
TABLE_OPTIONS = {
    "doudizhu": [{"preset": p} for p in ("seed", "douzero", "rlcard")],
    "doudizhu4": [{}],
    "wakeng": [{"bombs": False}, {"min_straight": 3, "min_pair_chain": 2, "min_airplane": 2},
               {"min_straight": 11, "min_pair_chain": 8, "min_airplane": 5}],
    "niangniang": [{"rank_order": r, "allow_trio_single": t, "min_pair_chain": m}
                   for r in ("standard", "three_high") for t in (False, True) for m in (2, 5)],
    "wulong": [{"wild_jokers": w, "joker_order": j} for w in ("both", "big_only", "none")
               for j in ("big_over_small", "first_played")],
    "paodekuai": [{"deck": d, "aaa_bomb": a, "four_with_three": f, "short_finish": s}
                  for d in ("16", "15") for a in (False, True) for f in (False, True)
                  for s in (False, True)],
}


def largest_hand(g) -> int:
    """The most cards a seat holds in the play phase: ``Game.max_hand``; Wakeng's digger holds
    ``HAND`` once he has buried (he plays nothing while he holds the kitty too)."""
    if g.info.name == "wakeng":
        from cardenvs.games.wakeng import HAND

        return HAND
    return g.max_hand


@pytest.mark.parametrize("game", GAMES)
def test_no_play_row_longer_than_the_largest_hand(game):
    """Every row of every option set's play table fits in the largest hand a seat holds in the
    play phase."""
    assert set(TABLE_OPTIONS) == set(GAMES)
    for options in TABLE_OPTIONS[game]:
        g = make_game(game, **options)
        longest = int(g.tab.ncards.max())
        assert longest <= largest_hand(g), (options, longest, largest_hand(g))


def test_paodekuai_deck15_table():
    """``deck="15"``: 15-card hands, no 16-card row; the 16-card deck's table is unchanged."""
    g15, g16 = make_game("paodekuai", deck="15"), make_game("paodekuai")
    assert g15.max_hand == 15 and int(g15.tab.ncards.max()) == 15
    assert int(g16.tab.ncards.max()) == 16
    # the rows of at most 15 cards (63,709 rows with the 16-card ones before), in table order
    assert len(g15.table) == 60_823 and g15.n_actions == 60_824
    assert len(g16.table) == 89_953 and g16.n_actions == 89_954
    # every row of the 15-card table is a row of the 16-card table (same reading)
    assert {g15.table.row_string(i) for i in range(len(g15.table))} <= set(g16.table._strings)
    page = (Path(__file__).resolve().parents[1] / "docs" / "rules" / "paodekuai.md").read_text()
    assert f'With `deck="15"` N = {g15.n_actions:,};' in page


# -- 14: a state that leaves the seat to move no legal action ------------------------------------


def _stuck(g, seed: int = 3):
    """A live play-phase state of ``g`` (from random play) where the seat to move leads, and
    the same state with his hand moved to his played pile: it passes every field check (cards
    are conserved) but leaves him no legal action (no play, and no pass on a lead) in an
    unfinished game."""
    from cardenvs.core.state import played_off

    rng = np.random.default_rng(seed)
    s = _play_position(g, rng, lead=True)
    bad = s.copy()
    seat = int(bad[CUR])
    ho, po = hand_off(seat), played_off(g.n_players, seat)
    bad[po:po + 16] += bad[ho:ho + 16]
    bad[ho:ho + 16] = 0
    if g.info.name == "wulong":  # an undeclared seat may still declare (报牌), even empty-handed
        from cardenvs.games.wulong import X_DECL

        bad[X_DECL + seat] = 1
    return s, bad


@pytest.mark.parametrize("game", GAMES)
def test_stuck_state_refused_by_check_state_and_set_state(game):
    import importlib

    env = importlib.import_module(f"cardenvs.{REGISTRY[game].env_module}").env()
    env.reset(seed=5)
    g = env.unwrapped.game
    good, bad = _stuck(g)
    assert g.check_state(good) is good  # the live state passes
    assert g.state_spec().scan(bad) == 0  # it passes every field check
    with pytest.raises(ValueError, match=rf"{game} state: the game is not over .* seat "
                                         rf"{int(bad[CUR])}, to move, has no legal action"):
        g.check_state(bad)
    snap = env.unwrapped.get_state()
    before = env.unwrapped.state_vec.copy()
    snap["state"] = bad
    with pytest.raises(ValueError, match="has no legal action"):
        env.unwrapped.set_state(snap)
    assert np.array_equal(env.unwrapped.state_vec, before)  # nothing changed
    env.step(int(env.unwrapped.legal_actions()[0]))  # and the env still plays


@pytest.mark.parametrize("game", GAMES)
def test_stuck_state_refused_by_load_states_before_anything_is_written(game):
    from cardenvs.vector import VectorGame

    g = make_game(game)
    vg = VectorGame(g, 3, masks=True)
    vg.reset(seed=1)
    vg.step(vg.legal[np.arange(3), 0])  # the slots have moved on from their deals
    names = ("legal", "n_legal", "seat", "rewards", "done", "obs", "masks", "states")
    keep = {k: getattr(vg, k).copy() for k in names}
    good, bad = _stuck(g)
    with pytest.raises(ValueError, match=r"states\[1\] \(for slot 2\): .*has no legal action"):
        vg.load_states(np.stack([good, bad]), [0, 2])
    for k, v in keep.items():
        assert np.array_equal(getattr(vg, k), v), k
    vg.step(vg.legal[np.arange(3), 0])  # the batch still plays: no reset needed
    vg.load_states(np.stack([good]), [1])  # a good row loads
    assert np.array_equal(vg.states[1], good)
