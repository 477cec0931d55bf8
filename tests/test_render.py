"""``render_mode="rgb_array"``: the table drawn as an image (cardenvs.core.image) from the same
TableView record as the text render, in the AEC env and the single-agent SeatEnv of every game;
SB3's make_vec_env (which asks for rgb_array) and gymnasium's RecordVideo."""

from __future__ import annotations

import importlib

import gymnasium
import numpy as np
import pytest

import cardenvs
from cardenvs.core import image
from cardenvs.core.image import (
    CARD_ROW_H, CARDS_X, EDGE, FACE, HEADER_H, JOKER_FACE, SEAT_H, TURN_EDGE, draw_table,
    image_size, image_text, parse_cards, wrap,
)
from cardenvs.core.render import RENDER_MODES, SeatView, TableLine, TableView, text_of

GAMES = list(cardenvs.GAMES)
FACES = [FACE, *JOKER_FACE.values()]


def game_env(name: str, **kwargs):
    return importlib.import_module("cardenvs." + cardenvs.GAMES[name]).env(**kwargs)


def count_cards(img: np.ndarray, y: int) -> int:
    """Cards of the fanned row whose top is at ``y``: a card's left edge followed by its face,
    on a line below the rank letters and above the joker marks."""
    row = img[y + 26, CARDS_X - 1:]
    edge = np.all(row[:-1] == EDGE, axis=1)
    face = np.zeros(len(row) - 1, bool)
    for f in FACES:
        face |= np.all(row[1:] == f, axis=1)
    return int(np.sum(edge & face))


def play_deal(name: str, seed: int):
    """Frames, texts and views of every position of one random deal of ``name``."""
    env = game_env(name, render_mode="rgb_array")
    g = env.unwrapped.game
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    frames, texts, views = [], [], []

    def keep():
        frames.append(env.render())
        texts.append(g.render(env.unwrapped.state_vec))
        views.append(g.table_view(env.unwrapped.state_vec))

    keep()
    for agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        ids = env.unwrapped.legal_actions()
        env.step(int(ids[rng.integers(len(ids))]))
        keep()
    return g, frames, texts, views


@pytest.mark.parametrize("name", GAMES)
def test_aec_rgb_array_every_position(name):
    """Every position of a deal: an (H, W, 3) uint8 image of the game's one size; the same deal
    draws the same images; positions of different texts draw different images; the image
    shows the view: the seat to move highlighted, each hand with its number of cards."""
    env = game_env(name, render_mode="rgb_array")
    n = env.unwrapped.game.n_players
    assert env.metadata["render_modes"] == RENDER_MODES and env.metadata["render_fps"] > 0
    h, w = image_size(n)
    first = env.render()  # before reset: a frame of the same size saying so
    assert first.shape == (h, w, 3) and first.dtype == np.uint8
    g, frames, texts, views = play_deal(name, 3)
    assert len(frames) > 10
    for f in frames:
        assert f.shape == (h, w, 3) and f.dtype == np.uint8
    _, again, _, _ = play_deal(name, 3)
    assert all(np.array_equal(a, b) for a, b in zip(frames, again))
    changed = [k for k in range(1, len(texts)) if texts[k] != texts[k - 1]]
    assert len(changed) > 10
    for k in changed:
        assert not np.array_equal(frames[k], frames[k - 1]), (name, k, texts[k])
    for f, v in zip(frames, views):
        for s in v.seats:
            y = HEADER_H + s.seat * SEAT_H
            assert np.array_equal(f[y + 3, 9], TURN_EDGE) == s.to_move
            assert count_cards(f, y + 13) == len(parse_cards(s.hand)) == len(s.hand)
        for line in text_of(v).splitlines():  # the font has every character drawn
            assert "?" not in image_text(line), line
    assert views[-1].done and all(s.reward is not None for s in views[-1].seats)


@pytest.mark.parametrize("name", GAMES)
def test_seatenv_rgb_array(name):
    """The single-agent view through gymnasium.make, as SB3 and RecordVideo make it."""
    env = gymnasium.make(cardenvs.GYM_IDS[name], render_mode="rgb_array")
    n = env.unwrapped.game.n_players
    shape = (*image_size(n), 3)
    assert env.unwrapped.render().shape == shape  # before reset (gymnasium.make's wrapper refuses)
    _, info = env.reset(seed=0)
    before = env.render()
    legal = np.flatnonzero(info["action_mask"])
    env.step(int(legal[0]))
    after = env.render()
    assert before.shape == after.shape == shape and after.dtype == np.uint8
    assert not np.array_equal(before, after)
    assert np.array_equal(after, draw_table(env.unwrapped.game.table_view(env.unwrapped.state_vec)))


def test_seatenv_passes_gymnasium_render_check():
    from gymnasium.utils.env_checker import check_env

    check_env(gymnasium.make("cardenvs/Wakeng-Seat-v0", render_mode="rgb_array").unwrapped)


def test_image_matches_view_record():
    """A hand-made view: the header facts wrap, a card line draws its cards, a joker with the
    rank it stands for; seat 1 to move."""
    v = TableView("Test", [f"fact {i}: {'x' * 20}" for i in range(5)],
                  [SeatView(0, "landlord", "3344", last="44"),
                   SeatView(1, "farmer", "TJQKA2BR", to_move=True), SeatView(2, "", "")],
                  [TableLine("to beat", "45R[6]78 by player_0", cards="45R[6]78", note="by p0"),
                   TableLine("recent", "p0:44")])
    img = draw_table(v)
    assert img.shape == (*image_size(3), 3)
    counts = [count_cards(img, HEADER_H + q * SEAT_H + 13) for q in range(3)]
    assert counts == [4, 8, 0]
    assert [np.array_equal(img[HEADER_H + q * SEAT_H + 3, 9], TURN_EDGE) for q in range(3)] == [
        False, True, False]
    assert count_cards(img, HEADER_H + 3 * SEAT_H + 6) == 5
    assert np.any(np.all(img[HEADER_H + 3 * SEAT_H + 6:][:CARD_ROW_H] == image.BLUE, axis=2))
    assert wrap(v.facts, " | ", 80) == [" | ".join(v.facts[:2]), " | ".join(v.facts[2:4]), v.facts[4]]


def test_parse_cards_and_text():
    assert parse_cards("555+3") == [("5", "", False)] * 3 + [("3", "", True)]
    assert parse_cards("45R[6]78") == [("4", "", False), ("5", "", False), ("R", "6", False),
                                       ("7", "", False), ("8", "", False)]
    assert image_text("娘娘 player_1 头家 末家 活子 é") == "NIANGNIANG PLAYER_1 TOUJIA MOJIA HUOZI ?"
    for bad in (0, -1, 2.0, True, "3"):
        with pytest.raises(ValueError, match="n_players"):
            image_size(bad)


def test_sb3_make_vec_env():
    """SB3's make_vec_env creates its envs with render_mode="rgb_array" (issue 51, item 4)."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("cardenvs/Wakeng-Seat-v0", n_envs=2, seed=0)
    obs = venv.reset()
    assert obs.shape == (2, venv.observation_space.shape[0])
    masks = np.array(venv.env_method("action_masks"))
    venv.step(np.argmax(masks, axis=1))
    images = venv.get_images()
    assert len(images) == 2 and all(i.shape == (*image_size(3), 3) for i in images)
    venv.close()


def test_record_video_of_a_deal(tmp_path):
    """gymnasium's RecordVideo writes one mp4 of a whole deal, a frame a learner step."""
    pytest.importorskip("moviepy", reason="RecordVideo needs moviepy (the dev extra)")
    import imageio
    import imageio_ffmpeg
    from gymnasium.wrappers import RecordVideo

    env = gymnasium.make("cardenvs/Wakeng-Seat-v0", render_mode="rgb_array")
    out = tmp_path / "video"
    env = RecordVideo(env, str(out), episode_trigger=lambda e: e == 0, disable_logger=True)
    _, info = env.reset(seed=0)
    steps, done = 0, False
    while not done:
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
        steps += 1
    env.close()
    videos = list(out.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0
    n_frames, _ = imageio_ffmpeg.count_frames_and_secs(str(videos[0]))
    with imageio.get_reader(str(videos[0]), "ffmpeg") as r:
        first = r.get_data(0)
    assert n_frames == steps + 1 and first.shape == (*image_size(3), 3)
