"""What a newcomer meets first: a misspelt or foreign option is a ValueError naming the env,
its options and the closest name, in every game and view; the first build of a game whose
numba kernels are not cached says on stderr that they compile (once per process and game);
the infos are numeric, with the phase's names documented."""

from __future__ import annotations

import importlib
import json
import pickle
import re

import gymnasium
import numpy as np
import pytest

import cardenvs
from cardenvs.core import compile_notice
from cardenvs.core.infocode import Named, named_codes
from cardenvs.registry import REGISTRY
from cardenvs.vector import VectorGame
from cardenvs.wrappers import SeatEnv

GAMES = list(cardenvs.GAMES)


def _module(game: str):
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES[game]}")


VIEWS = {
    "aec": lambda game, **kw: _module(game).env(**kw),
    "raw_env": lambda game, **kw: _module(game).raw_env(**kw),
    "SeatEnv": lambda game, **kw: SeatEnv(game, seats=0, **kw),
    "VectorGame": lambda game, **kw: VectorGame(game, 2, **kw),
    "gymnasium": lambda game, **kw: gymnasium.make(cardenvs.GYM_IDS[game], **kw),
    "make_game": lambda game, **kw: cardenvs.make_game(game, **kw),
}


# -- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("game", GAMES)
def test_an_unknown_option_names_the_env_and_its_options(game, view):
    options = REGISTRY[game].option_names()
    with pytest.raises(ValueError) as e:
        VIEWS[view](game, max_cycles=10)
    msg = str(e.value)
    assert f"cardenvs.{REGISTRY[game].env_module} (game {game!r}) has no option 'max_cycles'" in msg
    assert "Its options: " + ", ".join(options) in msg
    assert "did you mean" not in msg  # nothing close to max_cycles


@pytest.mark.parametrize("game", GAMES)
def test_a_misspelt_option_gets_the_close_match(game):
    first = REGISTRY[game].option_names()[0]
    typo = first[:-1] + ("x" if first[-1] != "x" else "y")
    with pytest.raises(ValueError, match=rf"has no option {typo!r} \(did you mean {first!r}\?\)"):
        _module(game).env(**{typo: None})
    # the environments' own arguments are offered too
    with pytest.raises(ValueError, match=r"did you mean 'render_mode'\?"):
        _module(game).env(render_mod="ansi")


def test_several_unknown_options_are_all_named():
    with pytest.raises(ValueError, match=r"has no option 'a' \(nor 'b'\)\. Its options"):
        cardenvs.doudizhu_v0.env(a=1, b=2)


def test_the_option_names_are_the_game_classes_options():
    # doudizhu4 is DouDizhu(4, ...): its options are the keywords after the player count
    assert REGISTRY["doudizhu4"].option_names() == REGISTRY["doudizhu"].option_names() == (
        "auction", "all_pass", "max_redeals", "spring", "reward", "preset")
    for game in GAMES:
        g = cardenvs.make_game(game)
        assert set(REGISTRY[game].option_names()) == set(g.options)


def test_good_options_still_reach_the_game():
    env = cardenvs.wakeng_v0.env(bombs=False, render_mode="ansi")
    assert env.unwrapped.game.options["bombs"] is False
    with pytest.raises(ValueError, match="auction='nope' is not one of"):  # a bad value: as before
        cardenvs.doudizhu_v0.env(auction="nope")


# -- the compile notice --------------------------------------------------------------------------


def test_the_notice_is_printed_once_per_process_and_game(monkeypatch, capsys):
    monkeypatch.setattr(compile_notice, "_announced", set())
    monkeypatch.setattr(compile_notice, "_warm", set())
    monkeypatch.setattr(compile_notice, "kernels_cached", lambda game, names=(): False)
    cardenvs.wakeng_v0.env()  # cold: says so
    SeatEnv("wakeng", seats=0)  # the same game again: silent
    cardenvs.paodekuai_v0.env()  # another game: says so
    err = capsys.readouterr().err
    assert err.count(compile_notice.compile_message("wakeng")) == 1
    assert err.count(compile_notice.compile_message("paodekuai")) == 1
    assert err.count("cardenvs: compiling") == 2
    assert compile_notice.compile_message("wakeng") == (
        "cardenvs: compiling the numba kernels for wakeng (first run on this machine: a few "
        "minutes; cached afterwards) ...")


def test_warm_caches_print_nothing(monkeypatch, capsys):
    monkeypatch.setattr(compile_notice, "_announced", set())
    monkeypatch.setattr(compile_notice, "_warm", set())
    cardenvs.wakeng_v0.env().reset(seed=0)  # compiles (and caches) if needed
    capsys.readouterr()
    monkeypatch.setattr(compile_notice, "_announced", set())
    monkeypatch.setattr(compile_notice, "_warm", set())
    assert compile_notice.kernels_cached("wakeng")  # the reset above filled the cache
    cardenvs.wakeng_v0.env()
    SeatEnv("wakeng", seats=0)
    assert capsys.readouterr().err == ""
    assert compile_notice._warm == {"wakeng"}


def test_the_arena_announces_again_but_the_envs_not(monkeypatch, capsys):
    monkeypatch.setattr(compile_notice, "_announced", set())
    assert compile_notice.announce("wulong") and not compile_notice.announce("wulong")
    assert compile_notice.announce("wulong", again=True)
    assert not compile_notice.notice_if_cold("wulong")
    assert capsys.readouterr().err.count("compiling the numba kernels for wulong") == 2


# -- numeric infos -------------------------------------------------------------------------------


def test_named_is_an_int_that_reads_as_its_name():
    play = named_codes(("auction", "play", "done"))[1]
    assert isinstance(play, int) and int(play) == 1 and play == 1 and play + 1 == 2
    assert play == "play" and play != "done" and play in ("take", "play")
    assert str(play) == f"{play}" == "play" and repr(play) == "Named(1, 'play')"
    assert json.dumps({"phase": play}) == '{"phase": 1}'
    assert np.asarray(play).dtype == np.int64 and np.array([play, play]).tolist() == [1, 1]
    back = pickle.loads(pickle.dumps(play))
    assert type(back) is Named and back == "play" and back == 1
    assert {1: "x"}[play] == "x"


def _numeric(v) -> bool:
    if isinstance(v, list):
        return all(_numeric(x) for x in v)
    return isinstance(v, (int, float, np.integer, np.floating, np.bool_)) and not isinstance(v, str)


@pytest.mark.parametrize("game", GAMES)
def test_every_info_value_is_numeric_and_the_phase_names_documented(game):
    mod = _module(game)
    options = {"match": True} if game == "niangniang" else {}
    env = mod.env(**options)
    phases = mod.raw_env.PHASES
    seen = set()
    rng = np.random.default_rng(0)
    for seed in range(2):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            _, _, term, trunc, info = env.last()
            for key, value in info.items():
                assert _numeric(value), (game, key, value)
            if "phase" in info:
                p = info["phase"]
                assert isinstance(p, Named) and phases[int(p)] == p.name
                seen.add(p.name)
            if term or trunc:
                env.step(None)
                continue
            legal = env.unwrapped.legal_actions()
            env.step(int(legal[rng.integers(len(legal))]))
    assert "play" in seen and set(seen) <= set(phases)
    assert phases.index("play") == 1 and phases.index("done") == 2  # the same in every game
    # the env page names the phases in the order of their codes
    doc = re.sub(r"\s+", " ", mod.__doc__)
    assert ", ".join(f"``{p}``" for p in phases) in doc, game


def test_wulong_status_and_play_to_beat_are_numeric_with_names():
    env = cardenvs.wulong_v0.env()
    env.reset(seed=1)
    statuses = cardenvs.wulong_v0.raw_env.STATUSES
    g = env.unwrapped.game
    for _ in range(60):
        info = env.infos[env.agent_selection]
        assert [s.name for s in info["status"]] == g.status(env.unwrapped.state_vec)
        assert all(statuses[int(s)] == s.name for s in info["status"])
        beat = info["to_beat"]
        assert isinstance(beat, Named) and beat.name == g.play_string(env.unwrapped.state_vec)
        assert (int(beat) < 0) == (beat.name == "")
        if env.terminations[env.agent_selection]:
            break
        env.step(int(env.unwrapped.legal_actions()[0]))


def test_a_text_choice_given_as_its_number_counts_as_that_text():
    """``--option deck=15`` on a command line reads 15 as an int; Pao De Kuai's deck option is
    the text '15': the number is taken as that choice, other numbers are still refused."""
    import cardenvs
    from cardenvs.cli import parse_option

    key, value = parse_option("deck=15")
    assert (key, value) == ("deck", 15)
    g = cardenvs.make_game("paodekuai", deck=value)
    assert g.options["deck"] == "15" and g.n_actions == cardenvs.make_game(
        "paodekuai", deck="15").n_actions == 60824
    with pytest.raises(ValueError, match="deck=14"):
        cardenvs.make_game("paodekuai", deck=14)
    with pytest.raises((TypeError, ValueError)):
        cardenvs.make_game("paodekuai", deck=True)
