"""Issue 51, rules items: the query helper applies the env's legality code (7), play tables hold
no row longer than the largest hand (8), and a state leaving the seat to move no legal action
is refused before anything is written (14)."""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs
from cardenvs import legal_moves, make_game
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


def _play_position(g, rng, seat_cards_min: int = 2):
    """A play-phase state of ``g`` after at least one play-phase action (so no first-play rule
    binds) where every seat holds ``seat_cards_min`` cards or more (no one-card 下家 rule) and,
    in Wulong, the seat to move has not declared."""
    s = g.new_state()
    buf = np.empty(g.n_actions, np.int64)
    while True:
        g.reset(s, int(rng.integers(2**62)))
        steps = int(rng.integers(1, 8))
        while not g.done(s):
            if (s[PHASE] == P_PLAY and s[NLOG] > s[PLAY_START] and steps <= 0
                    and _free_seat(g, s, seat_cards_min)):
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
    """A hand of 1..``max_hand`` cards and a play to beat (``None`` or a legal free lead of
    another hand from the rest of the deck), both dealt from one shuffled deck."""
    deck = np.repeat(np.arange(16), g.deck.full_counts())
    rng.shuffle(deck)
    n = int(rng.integers(1, max_hand + 1)) if rng.random() < 0.6 else int(rng.integers(1, 7))
    hand = np.bincount(deck[:n], minlength=16).astype(np.int64)
    if rng.random() < 0.3:
        return hand, -1
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
    max_hand = g.max_hand if hasattr(g, "max_hand") else 16
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
            got = legal_moves(game, g.deck.format(hand), prev_text, **kw)
            assert sorted(got) == sorted(env), (game, g.deck.format(hand), prev_text)
            checked += 1
            nonempty += bool(env)
    assert checked == 240 and nonempty > 100
