"""``cardenvs play``: typed moves in the wild-joker games, suits in Wakeng, readable bot moves,
wrapped move lists, Ctrl-C and typo suggestions (scripted input, no terminal needed)."""

from __future__ import annotations

import builtins
import io

import numpy as np
import pytest

import cardenvs
from cardenvs.cli import main
from cardenvs.core.state import hand_off
from cardenvs.play import _public, format_moves, parse_move, play


def _row(game, text: str) -> int:
    return int(game.table.find(text, None))


@pytest.mark.parametrize("name", ["niangniang", "wulong"])
def test_wild_joker_typed_as_held_or_in_brackets(name):
    g = cardenvs.make_game(name)
    aaaa, aaa, straight = _row(g, "AAAA"), _row(g, "AAA"), _row(g, "45678")
    legal = np.array(sorted([aaaa, aaa, straight]) + [g.pass_id], np.int64)
    picks: list[str] = []
    # the cards held: three aces and the small joker standing for the fourth
    assert parse_move(g, "AAAB", legal, picks) == aaaa
    assert picks == ["B[A]"]
    picks.clear()
    assert parse_move(g, "AAAA", legal, picks) == aaaa and picks == []
    # the rules pages' bracket notation
    assert parse_move(g, "AAAR[A]", legal, picks) == aaaa and picks == ["R[A]"]
    picks.clear()
    assert parse_move(g, "45R[6]78", legal, picks) == straight and picks == ["R[6]"]
    assert parse_move(g, "45B78", legal) == straight
    # a joker alone stands for nothing (in Lanxi Wulong "R[6]" is the joker pick, not legal now)
    with pytest.raises(ValueError, match="stands in only in a play holding at least one "
                                         "natural|'R\\[6\\]' is not legal now"):
        parse_move(g, "R[6]", legal)
    with pytest.raises(ValueError, match="you cannot play"):
        parse_move(g, "AAAR[K]", legal)


@pytest.mark.parametrize("name", ["niangniang", "wulong"])
def test_every_stand_in_play_can_be_typed_as_the_cards_held(name):
    """Random positions: each legal card play needing a joker to stand in, typed as the cards
    the mover would put down (his naturals, then his wild jokers for what is missing), is
    read as that play (or listed among the readings when the same cards make several)."""
    g = cardenvs.make_game(name)
    js, ws = tuple(g.joker_slots), tuple(getattr(g, "wild_slots", g.joker_slots))
    rng = np.random.default_rng(7)
    s = g.new_state()
    buf = np.empty(g.n_actions, np.int64)
    checked = 0
    for _ in range(12):
        g.reset(s, int(rng.integers(2**62)))
        while not g.done(s):
            k = g.legal(s, buf)
            legal = buf[:k].copy()
            hand = s[hand_off(g.current(s)):hand_off(g.current(s)) + 16]
            for a in legal[legal < g.pass_id][:40]:
                e = g.tab.counts[a]
                naturals = [r for r in range(g.deck.n_ranks) if r not in js]
                missing = sum(max(0, int(e[r] - hand[r])) for r in naturals)
                free = [j for j in ws for _ in range(int(hand[j] - e[j]))]
                if missing == 0 or len(free) < missing or not any(
                        min(int(e[r]), int(hand[r])) for r in naturals):
                    continue
                typed = np.zeros(16, np.int64)
                for r in naturals:
                    typed[r] = min(int(e[r]), int(hand[r]))
                for j in js:
                    typed[j] = e[j]
                for j in free[:missing]:
                    typed[j] += 1
                text = g.deck.format(typed).replace(" ", "")
                try:
                    got = parse_move(g, text, legal)
                    assert got == a, (text, g.action_to_string(int(a)), g.action_to_string(got))
                except ValueError as err:
                    assert "several ways" in str(err), (text, err)
                    assert f" {g.action_to_string(int(a))}" in str(err), (text, err)
                checked += 1
            g.step(s, int(legal[rng.integers(k)]))
    assert checked > 50


def test_typo_suggests_the_word():
    g = cardenvs.make_game("doudizhu")
    legal = np.array([_row(g, "33"), g.pass_id], np.int64)
    with pytest.raises(ValueError, match="did you mean 'pass'"):
        parse_move(g, "pss", legal)
    with pytest.raises(ValueError, match="unknown card 'Z'"):
        parse_move(g, "zz", legal)


def test_bots_moves_print_readably():
    wl = cardenvs.make_game("wulong")
    pick = wl.string_to_action("R[6]")
    assert _public(wl, pick) == "joker R as 6"
    nn = cardenvs.make_game("niangniang")
    assert _public(nn, nn.string_to_action("joker as 5")) == "joker as 5"
    wk = cardenvs.make_game("wakeng")
    assert _public(wk, wk.string_to_action("bury D7")) == "(a private bury choice)"
    assert _public(wk, wk.string_to_action("bid 2")) == "bid 2"


def test_long_move_lists_wrap_between_moves():
    g = cardenvs.make_game("wulong")
    legal = np.arange(0, 300, 7, dtype=np.int64)
    text = format_moves(g, legal, width=50)
    lines = text.splitlines()
    assert len(lines) > 3 and all(len(line) <= 50 for line in lines)
    items = [it for line in lines for it in line.removeprefix("moves: ").strip().split("  ")]
    assert items == [f"[{i + 1}] {g.action_to_string(int(a))}" for i, a in enumerate(legal)]


def test_wakeng_turn_lists_the_diamonds_held():
    out = io.StringIO()
    lines = iter(["#1"] * 300)
    play("wakeng", "rules", seat=0, seed=3, input_fn=lambda _: next(lines), out=out)
    text = out.getvalue()
    env = cardenvs.wakeng_v0.env()
    env.reset(seed=3)
    g = env.unwrapped.game
    obs = env.observe("player_0")["observation"]
    a, b = g.layout.offsets["diamonds"]
    held = " ".join(f"D{g.deck.order[r]}" for r in np.flatnonzero(obs[a:b] > 0.5))
    assert f"diamonds in your hand: {held or 'none'}" in text


def test_ctrl_c_ends_the_game_cleanly(monkeypatch, capsys):
    def interrupt(_):
        raise KeyboardInterrupt

    out = io.StringIO()
    assert play("niangniang", "rules", seat=0, seed=2, input_fn=interrupt, out=out) is None
    assert out.getvalue().rstrip().endswith("interrupted: bye")
    monkeypatch.setattr(builtins, "input", interrupt)
    assert main(["play", "wakeng", "--seed", "1"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "interrupted: bye" in captured.out


def test_scripted_wulong_deal_with_typo_and_numbers():
    lines = iter(["pss", "#1"] + ["#1"] * 400)
    out = io.StringIO()
    rewards = play("wulong", "rules", seat=1, seed=4, input_fn=lambda _: next(lines), out=out)
    text = out.getvalue()
    assert rewards is not None and "rewards:" in text
    assert "did you mean 'pass'?" in text
    assert "(pick pick)" not in text
