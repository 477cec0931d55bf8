"""Bad input: every misuse is a ``ValueError`` / ``TypeError`` whose message names the problem.

Rules query API (``legal_moves``), environment options, ``step`` / ``observe`` misuse (generic,
parametrized over every registered game) and impossible custom deals (3-player Dou Dizhu:
17 cards per hand, 3 in the kitty, one 54-card deck; rules page ``doudizhu.md``).  After a
failed ``reset(options=...)`` the running game must be untouched.
"""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

import cardenvs
from cardenvs import doudizhu_v0, legal_moves
from cardenvs.core.state import hand_off

NAMES = sorted(cardenvs.GAMES)

# A legal 3-player deal written by hand: 17 + 17 + 17 cards, kitty "22R" (2 twos + big joker
# remain: the deck has four 2s, seat 2 holds two of them).
H0 = "3333444455556666B"
H1 = "777788889999TTTTJ"
H2 = "JJJQQQQKKKKAAAA22"
KITTY = "22R"


def game_env(name: str, **kwargs):
    return importlib.import_module("cardenvs." + cardenvs.GAMES[name]).env(**kwargs)


@pytest.fixture(params=NAMES, ids=NAMES)
def name(request) -> str:
    return request.param


def snapshot(env) -> dict:
    return {
        "state": env.unwrapped.state_vec.copy(),
        "agents": list(env.agents),
        "sel": env.agent_selection,
        "legal": env.unwrapped.legal_actions(),
        "history": list(env.unwrapped.history),
        "obs": [env.observe(a)["observation"].copy() for a in env.possible_agents],
        "term": dict(env.terminations),
        "rew": dict(env._cumulative_rewards),
    }


def assert_unchanged(env, snap: dict) -> None:
    np.testing.assert_array_equal(env.unwrapped.state_vec, snap["state"])
    assert env.agents == snap["agents"]
    assert env.agent_selection == snap["sel"]
    np.testing.assert_array_equal(env.unwrapped.legal_actions(), snap["legal"])
    np.testing.assert_array_equal(
        np.flatnonzero(env.observe(env.agent_selection)["action_mask"]), np.sort(snap["legal"]))
    assert env.unwrapped.history == snap["history"]
    for a, o in zip(env.possible_agents, snap["obs"]):
        np.testing.assert_array_equal(env.observe(a)["observation"], o)
    assert env.terminations == snap["term"]
    assert env._cumulative_rewards == snap["rew"]


# -- the rules query API ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hand, fragment",
    [
        ("33X", r"unknown card 'X'"),
        ("3x", r"unknown card 'x'"),
        ("77777", r"too many '7'.*holds 4"),
        ("RR", r"too many 'R'.*holds 1"),
        ("BB3", r"too many 'B'.*holds 1"),
        ("S3H3", r"suit letter 'S'"),
        ("3H", r"suit letter 'H'"),
        ("D4", r"suit letter 'D'"),
        ("10", r"unknown card '1'"),  # ten is written T
    ],
    ids=["X", "lowercase", "five_7s", "two_R", "two_B", "suits_S", "suit_H", "suit_D", "ten_as_10"],
)
def test_legal_moves_malformed_hand(hand, fragment):
    with pytest.raises(ValueError, match=fragment):
        legal_moves("doudizhu", hand)


def test_legal_moves_bad_types():
    with pytest.raises(TypeError, match="hand must be a string"):
        legal_moves("doudizhu", 33)
    with pytest.raises(TypeError, match="prev must be a string"):
        legal_moves("doudizhu", "33", 4)


def test_legal_moves_bad_prev():
    with pytest.raises(ValueError, match=r"prev '34' is not a legal combination"):
        legal_moves("doudizhu", "3344", "34")
    with pytest.raises(ValueError, match=r"prev 'BR3'"):
        legal_moves("doudizhu", "3344", "BR3")
    with pytest.raises(ValueError, match=r"prev '3Z': unknown card 'Z'"):
        legal_moves("doudizhu", "3344", "3Z")
    with pytest.raises(ValueError, match=r"prev '22222'.*too many '2'"):
        legal_moves("doudizhu", "3344", "22222")
    # 2 and jokers are never in chains (rules page): "TJQKA2" is no straight
    with pytest.raises(ValueError, match=r"not a legal combination"):
        legal_moves("doudizhu", "3344", "TJQKA2")


def test_legal_moves_ambiguous_prev_needs_prev_type():
    # 333444555666: a 4-trio airplane, or a 3-trio airplane carrying three singles
    with pytest.raises(ValueError, match=r"more than one way.*airplane.*prev_type"):
        legal_moves("doudizhu", "7", "333444555666")
    # the plain reading named explicitly: only a higher 4-trio airplane follows
    hand = "777888999TTTJ"
    assert legal_moves("doudizhu", hand, "333444555666", prev_type="airplane") == ["777888999TTT"]
    # as airplane + singles it is still two readings (body 333444555 or 444555666) ...
    with pytest.raises(ValueError, match=r"more than one way.*333444555\+666.*444555666\+333"):
        legal_moves("doudizhu", hand, "333444555666", prev_type="airplane_singles")
    # ... which the body+kickers notation settles: a 3-trio airplane above 444555666 with three
    # single kickers from outside its chain: 777888999 + TTT / TTJ, 888999TTT + 777 / 77J
    expected = ["777888999TTT", "777888999TTJ", "77888999TTTJ"]
    assert legal_moves("doudizhu", hand, "444555666+333") == expected
    assert legal_moves("doudizhu", hand, "444555666+333", prev_type="airplane_singles") == expected


def test_legal_moves_bad_prev_type():
    with pytest.raises(ValueError, match=r"unknown play type 'plane'.*airplane"):
        legal_moves("doudizhu", "3", "333444555666", prev_type="plane")
    with pytest.raises(ValueError, match=r"'33' is not a legal combination of type single"):
        legal_moves("doudizhu", "44", "33", prev_type="single")
    with pytest.raises(ValueError, match=r"prev_type given without prev"):
        legal_moves("doudizhu", "44", prev_type="pair")


def test_legal_moves_hand_and_prev_exceed_the_deck():
    # four 2s in hand and a pair of 2s on the table: six 2s in a one-deck game
    with pytest.raises(ValueError, match=r"'2'"):
        legal_moves("doudizhu", "2222", "22")
    # both jokers in hand and the rocket on the table
    with pytest.raises(ValueError, match=r"'[BR]'"):
        legal_moves("doudizhu", "BR3", "BR")


def test_unknown_game():
    with pytest.raises(ValueError, match=r"unknown game 'poker'.*doudizhu"):
        legal_moves("poker", "33")
    with pytest.raises(ValueError, match=r"unknown game 'Doudizhu'"):
        cardenvs.make_game("Doudizhu")


def test_legal_moves_bad_option():
    with pytest.raises(ValueError, match=r"preset='x'"):
        legal_moves("doudizhu", "33", preset="x")
    with pytest.raises(ValueError, match=r"has no option 'colour'"):
        legal_moves("doudizhu", "33", colour="red")


# -- environment options ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, exc, fragment",
    [
        (dict(auction="x"), ValueError, r"auction='x'.*'bid'.*'fixed'"),
        (dict(preset="x"), ValueError, r"preset='x'.*'seed'"),
        (dict(all_pass="x"), ValueError, r"all_pass='x'"),
        (dict(reward="x"), ValueError, r"reward='x'.*'score'.*'win_loss'"),
        (dict(max_redeals=-1), ValueError, r"max_redeals.*-1"),
        (dict(max_redeals=1.5), TypeError, r"max_redeals must be an int, got float"),
        (dict(max_redeals=True), TypeError, r"max_redeals must be an int, got bool"),
        (dict(spring="yes"), TypeError, r"spring must be a bool"),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else str(v),
)
def test_doudizhu_bad_option_values(kwargs, exc, fragment):
    with pytest.raises(exc, match=fragment):
        doudizhu_v0.env(**kwargs)


@pytest.mark.parametrize(
    "kwargs, exc, fragment",
    [
        (dict(illegal="x"), ValueError, r"illegal='x'.*'lose'.*'raise'"),
        (dict(render_mode="x"), ValueError, r"render_mode='x'.*ansi"),
        (dict(render_mode="rgb"), ValueError, r"render_mode='rgb'.*'rgb_array'"),
        (dict(colour="red"), ValueError, r"has no option 'colour'"),
        (dict(illegal_reward="a"), (TypeError, ValueError), r"illegal_reward"),
    ],
    ids=["illegal", "render_mode", "rgb_array", "unknown_option", "illegal_reward"],
)
def test_generic_bad_options(name, kwargs, exc, fragment):
    with pytest.raises(exc, match=fragment):
        game_env(name, **kwargs)


# -- misuse of step / observe ----------------------------------------------------------------------


def test_step_and_observe_before_reset(name):
    env = game_env(name)
    with pytest.raises(ValueError, match=r"reset\(\)"):
        env.step(0)
    with pytest.raises(ValueError, match=r"reset\(\)"):
        env.observe("player_0")


def test_action_out_of_range_and_wrong_type(name):
    env = game_env(name)
    env.reset(seed=0)
    n = env.action_space("player_0").n
    snap = snapshot(env)
    for bad in (-1, n, n + 10**6):
        with pytest.raises(ValueError, match=rf"action {bad} is outside the action space \[0, {n}\)"):
            env.step(bad)
    for bad, tname in ((1.0, "float"), ("pass", "str"), (True, "bool"), (np.float64(2), "float64"),
                       ([0], "list"), (np.array([0, 1]), "ndarray")):
        with pytest.raises(TypeError, match=rf"int.*got {tname}"):
            env.step(bad)
    with pytest.raises(TypeError, match=rf"{env.agent_selection} must act.*None"):
        env.step(None)
    assert_unchanged(env, snap)
    # numpy integers are ints
    legal = env.unwrapped.legal_actions()
    env.step(np.int64(legal[0]))
    assert env.unwrapped.history == [int(legal[0])]
    env.step(np.array(env.unwrapped.legal_actions()[0]))  # 0-d integer array
    assert len(env.unwrapped.history) == 2 or not env.agents


def test_step_after_the_game_is_over(name):
    env = game_env(name)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    while not any(env.terminations.values()):
        ids = env.unwrapped.legal_actions()
        env.step(int(ids[rng.integers(len(ids))]))
    # a done agent must step None (PettingZoo dead step)
    with pytest.raises(ValueError, match=rf"{env.agent_selection} is done.*None"):
        env.step(0)
    while env.agents:
        env.step(None)
    for bad in (0, None):
        with pytest.raises(ValueError, match=r"game is over.*reset\(\)"):
            env.step(bad)


def test_observe_and_spaces_with_unknown_agent(name):
    env = game_env(name)
    env.reset(seed=0)
    for bad in ("player_9", "player_-1", 0, "landlord"):
        with pytest.raises(ValueError, match=rf"unknown agent {bad!r}"):
            env.observe(bad)
        with pytest.raises(ValueError, match=rf"unknown agent {bad!r}"):
            env.action_space(bad)
        with pytest.raises(ValueError, match=rf"unknown agent {bad!r}"):
            env.observation_space(bad)


def test_action_strings_bad_input(name):
    env = game_env(name)
    u = env.unwrapped
    n = env.action_space("player_0").n
    with pytest.raises(ValueError, match=rf"action -1 is outside the action space \[0, {n}\)"):
        u.action_to_string(-1)
    with pytest.raises(ValueError, match=rf"action {n} is outside"):
        u.action_to_string(n)
    with pytest.raises(TypeError, match="int"):
        u.action_to_string(1.5)
    with pytest.raises(TypeError, match="str"):
        u.string_to_action(5)
    with pytest.raises(ValueError, match=r"unknown card 'X'"):
        u.string_to_action("33X")
    with pytest.raises(ValueError, match=r"'xyz'"):
        u.string_to_action("xyz")


def test_doudizhu_action_strings_bad_input():
    u = doudizhu_v0.env().unwrapped
    with pytest.raises(ValueError, match=r"bad bid 'bid 4'.*1\.\.3"):
        u.string_to_action("bid 4")
    with pytest.raises(ValueError, match=r"bad bid 'bid x'"):
        u.string_to_action("bid x")
    with pytest.raises(ValueError, match=r"'34' is not a legal combination"):
        u.string_to_action("34")
    with pytest.raises(ValueError, match=r"'BR\+3' is not a legal combination"):
        u.string_to_action("BR+3")


# -- impossible custom deals (3 players) -----------------------------------------------------------


BAD_DEALS = [
    (dict(kitty=KITTY), ValueError, r"needs 'hands'"),
    (dict(hands=[H0, H1]), ValueError, r"'hands' must list 3 hands, got 2"),
    (dict(hands=[H0, H1, H2, "3"]), ValueError, r"'hands' must list 3 hands, got 4"),
    (dict(hands=H0 + H1 + H2), TypeError, r"'hands' must be a list"),
    (dict(hands=[H0, H1, 5]), TypeError, r"hand of seat 2 must be a string"),
    (dict(hands=[H0[:-1], H1, H2 + "R"]), ValueError, r"hand of seat 0 has 16 cards.*17"),
    (dict(hands=[H0, H1, H2 + "R"]), ValueError, r"hand of seat 2 has 18 cards"),
    # each hand alone is possible, but five 3s in all
    (dict(hands=[H0, "3" + H1[1:], H2]), ValueError, r"5 cards of '3'.*holds 4"),
    (dict(hands=[H0, H1, H2], kitty="B2R"), ValueError, r"2 cards of 'B'.*holds 1"),
    (dict(hands=[H0, H1, "JJJQQQQKKKKAAAA2X"]), ValueError, r"seat 2.*unknown card 'X'"),
    (dict(hands=[H0, H1, "JJJQQQQKKKKAAAA2S"]), ValueError, r"seat 2.*suit letter 'S'"),
    (dict(hands=[H0, H1, H2], kitty="22"), ValueError, r"kitty has 2 cards.*3"),
    (dict(hands=[H0, H1, H2], kitty="22RB"), ValueError, r"kitty has 4 cards.*3"),
    (dict(hands=[H0, H1, H2], landlord=0), ValueError, r"both 'landlord' and 'bid'"),
    (dict(hands=[H0, H1, H2], bid=2), ValueError, r"both 'landlord' and 'bid'"),
    (dict(hands=[H0, H1, H2], landlord=3, bid=1), ValueError, r"landlord=3.*0\.\.2"),
    (dict(hands=[H0, H1, H2], landlord=-1, bid=1), ValueError, r"landlord=-1"),
    (dict(hands=[H0, H1, H2], landlord=0, bid=4), ValueError, r"bid=4.*1\.\.3"),
    (dict(hands=[H0, H1, H2], landlord=0, bid=0), ValueError, r"bid=0"),
    (dict(hands=[H0, H1, H2], landlord="0", bid=1), TypeError, r"landlord must be an int"),
    (dict(hands=[H0, H1, H2], landlord=0, bid=2.0), TypeError, r"bid must be an int"),
    (dict(hands=[H0, H1, H2], first_bidder=3), ValueError, r"first_bidder=3"),
    (dict(hands=[H0, H1, H2], dealer=1), ValueError, r"unknown deal option.*'dealer'"),
]


@pytest.mark.parametrize("options, exc, fragment", BAD_DEALS,
                         ids=[f"{i}-{f[:24]}" for i, (_, _, f) in enumerate(BAD_DEALS)])
def test_impossible_custom_deal_keeps_running_game(options, exc, fragment):
    env = doudizhu_v0.env()
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(5):  # a game in progress
        ids = env.unwrapped.legal_actions()
        env.step(int(ids[rng.integers(len(ids))]))
    assert env.agents
    snap = snapshot(env)
    with pytest.raises(exc, match=fragment):
        env.reset(options=options)
    assert_unchanged(env, snap)
    # and the game goes on
    ids = env.unwrapped.legal_actions()
    env.step(int(ids[0]))
    assert env.unwrapped.history == snap["history"] + [int(ids[0])]


def test_good_custom_deal_and_bad_options_type():
    env = doudizhu_v0.env()
    env.reset(options=dict(hands=[H0, H1, H2], kitty=KITTY, landlord=1, bid=2))
    u = env.unwrapped
    assert env.agent_selection == "player_1"
    assert env.infos["player_1"]["phase"] == "play" and env.infos["player_1"]["bid"] == 2
    # the landlord took the kitty
    hand1 = u.game.deck.format(u.state_vec[hand_off(1):hand_off(1) + 16])
    assert hand1 == "777788889999TTTTJ22R"
    snap = snapshot(env)
    with pytest.raises(TypeError, match="options must be a dict"):
        env.reset(options=[("hands", [H0, H1, H2])])
    assert_unchanged(env, snap)


# -- issue 17 items 3-7 and 11: the wrappers and the batched engine ---------------------------

def test_seatenv_refuses_the_learner_action_when_an_opponent_is_to_move():
    """Item 3: after an opponent policy raised inside step, the next step must not apply the
    learner's action to the opponent's seat."""
    from cardenvs.wrappers import SeatEnv

    calls = {"n": 0}

    def flaky(obs, legal):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("policy failure")
        return int(legal[0])

    env = SeatEnv("doudizhu", 0, opponents=flaky, auction="fixed")
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="policy failure"):
        for _ in range(10):
            env.step(int(env.legal_actions()[0]))
    s = env.state_vec.copy()
    assert s[0] != 2 and int(s[1]) != 0  # an opponent's seat is to move
    with pytest.raises(ValueError, match=r"an opponent's, is to move.*call reset\(\)"):
        env.step(int(env.game.pass_id))
    np.testing.assert_array_equal(env.state_vec, s)
    env.reset(seed=1)  # and reset recovers
    env.step(int(env.legal_actions()[0]))


def test_illegal_raise_keeps_the_pending_reward():
    """Item 4: a rejected illegal action must not erase the mover's pending reward."""
    env = game_env("niangniang", illegal="raise", match=True, target_score=40)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5000):
        agent = env.agent_selection
        if env._cumulative_rewards[agent] != 0 and not env.terminations[agent]:
            break
        env.step(int(rng.choice(env.unwrapped.legal_actions())))
    else:
        pytest.fail("no pending hand payout reached")
    pending = dict(env._cumulative_rewards)
    legal = set(env.unwrapped.legal_actions().tolist())
    bad = next(a for a in range(env.unwrapped.game.n_actions) if a not in legal)
    snap = snapshot(env)
    with pytest.raises(ValueError, match="illegal action"):
        env.step(bad)
    assert env._cumulative_rewards == pending and pending[agent] != 0
    assert_unchanged(env, snap)
    assert env.last()[1] == pending[agent]


def test_vector_step_random_is_all_or_nothing():
    """Item 5: step_random with a finished slot (auto_reset=False) changes no slot."""
    from cardenvs.vector import VectorGame

    vg = VectorGame("wakeng", 4, auto_reset=False)
    vg.reset(seed=3)
    for _ in range(10_000):
        if (vg.seat < 0).any():
            break
        vg.step_random(np.flatnonzero(vg.seat >= 0))
    done = int(np.flatnonzero(vg.seat < 0)[0])
    live = np.flatnonzero(vg.seat >= 0)
    assert live.size and live.min() < done or live.max() > done
    before = vg.states.copy(), vg.legal.copy(), vg.rewards.copy(), vg.done.copy()
    with pytest.raises(ValueError, match=rf"game {done} of the batch is over"):
        vg.step_random()
    for x, y in zip(before, (vg.states, vg.legal, vg.rewards, vg.done)):
        np.testing.assert_array_equal(x, y)


def test_vector_rejected_step_keeps_last_outputs_and_states_are_read_only():
    """Item 7: a rejected step keeps the previous call's rewards/done; legal_actions(-1)
    raises; writing into ``states`` is refused."""
    from cardenvs.vector import VectorGame

    vg = VectorGame("doudizhu", 3)
    vg.reset(seed=0)
    for _ in range(2000):  # until a step pays
        rew, done = vg.step_random(), vg.done
        if vg.done.any():
            break
    assert vg.done.any() and vg.rewards.any()
    rewards, done = vg.rewards.copy(), vg.done.copy()
    acts = vg.legal[:, 0].copy()
    acts[1] = -1
    with pytest.raises(ValueError, match="outside the action space"):
        vg.step(acts)
    np.testing.assert_array_equal(vg.rewards, rewards)
    np.testing.assert_array_equal(vg.done, done)
    for i in (-1, 3, 10**9):
        with pytest.raises(ValueError, match=r"slot index .* outside \[0, 3\)"):
            vg.legal_actions(i)
    with pytest.raises(TypeError):
        vg.legal_actions(1.0)
    with pytest.raises(ValueError, match="read-only"):
        vg.states[0, 1] = 2
    assert vg.states.copy().flags.writeable  # a copy is the caller's


def test_seatvecenv_step_async_rejects_a_wrong_shape():
    from cardenvs.sb3 import SeatVecEnv

    venv = SeatVecEnv("doudizhu", 4, seed=0)
    venv.reset()
    with pytest.raises(ValueError, match=r"actions must be 4 integers, got shape \(2, 2\)"):
        venv.step_async(np.zeros((2, 2), np.int64))
    venv.step_async(venv.vg.legal[:, :1].copy())  # (4, 1), as SB3 policies may give
    venv.step_wait()


@pytest.mark.parametrize("seed, exc", [(-1, ValueError), (1.5, TypeError), ("1", TypeError),
                                       (True, TypeError), (2**63, ValueError)])
def test_bad_seeds_everywhere(seed, exc):
    """Item 7: ValueError/TypeError (not gymnasium.error.Error) from every seeded entry."""
    from cardenvs.sb3 import SeatVecEnv
    from cardenvs.vector import VectorGame
    from cardenvs.wrappers import SeatEnv

    env = doudizhu_v0.env()
    env.reset(seed=2)
    snap = snapshot(env)
    rng = env.unwrapped.np_random.bit_generator.state
    with pytest.raises(exc, match="seed"):
        env.reset(seed=seed)
    assert_unchanged(env, snap)
    assert env.unwrapped.np_random.bit_generator.state == rng
    se = SeatEnv("doudizhu", 0)
    se.reset(seed=2)
    with pytest.raises(exc, match="seed"):
        se.reset(seed=seed)
    vg = VectorGame("doudizhu", 2)
    with pytest.raises(exc, match="seed"):
        vg.reset(seed=seed)
    with pytest.raises(exc, match="seed"):
        SeatVecEnv("doudizhu", 2, seed=seed)
    with pytest.raises(exc, match="seed"):
        SeatVecEnv("doudizhu", 2, seed=0).seed(seed)


def test_seatenv_rejected_custom_deal_does_not_advance_the_generator():
    from cardenvs.wrappers import SeatEnv

    a, b = SeatEnv("doudizhu", 0), SeatEnv("doudizhu", 0)
    a.reset(seed=7)
    b.reset(seed=7)
    before = a.state_vec.copy()
    with pytest.raises(ValueError, match="5 cards of '3'"):
        a.reset(options={"hands": [H0, "3" + H1[1:], H2]})
    np.testing.assert_array_equal(a.state_vec, before)
    act = int(a.legal_actions()[0])
    a.step(act)  # the running game goes on, as in the env that saw no error
    b.step(act)
    np.testing.assert_array_equal(a.state_vec, b.state_vec)
    oa, _ = a.reset()
    ob, _ = b.reset()
    np.testing.assert_array_equal(oa, ob)  # the same next deal as an env without the error
    np.testing.assert_array_equal(a.state_vec, b.state_vec)


def test_wulong_set_position_checks_before_writing():
    """Item 6: a rejected position leaves the caller's state untouched; "3333" is not four
    hands."""
    g = cardenvs.api.make_game("wulong")
    s = g.new_state()
    g.reset(s, 9)
    before = s.copy()
    bad = [
        (dict(hands="3333"), TypeError, "list of 4 card strings"),
        (dict(hands=["4", "5", "6", "7"], winner=1), ValueError, "winner=1"),
        (dict(hands=["4", "5", "6", ""], to_move=3), ValueError, "not an active seat"),
        (dict(hands=["4", "33", "6", "7"], to_move=1), ValueError, "not an active seat"),
        (dict(hands=["4", "5", "6", "7"], prev="XX"), ValueError, "X"),
        (dict(hands=["4", "5", "6", "7"], declared=[9]), ValueError, "declared seat"),
        (dict(hands=["4", "5", "6", "7"], prev="5", prev_seat=7), ValueError, "prev_seat"),
    ]
    for kwargs, exc, fragment in bad:
        with pytest.raises(exc, match=fragment):
            g.set_position(s, **kwargs)
        np.testing.assert_array_equal(s, before)
    g.set_position(s, ["45", "6", "7", "8"], 0)
    g.check_state(s)
    assert g.legal(s, np.empty(g.n_actions, np.int64)) >= 2


@pytest.mark.parametrize("hand, prev", [("55555555", "5"), ("44444444", "4444"),
                                        ("55555555", "55")])
def test_wulong_positions_needing_nine_natural_cards(hand, prev):
    """Item 7: a wild joker stands in only beside a natural card, so these need nine natural
    cards of one rank (two decks hold 8)."""
    with pytest.raises(ValueError, match="impossible position"):
        legal_moves("wulong", hand, prev)


def test_wulong_positions_with_wild_jokers_left_are_possible():
    # 7 + 2 = 9 fives: one 5 of the pair to beat was a wild joker beside a natural 5; only
    # bombs of 5s beat a pair of 5s
    assert legal_moves("wulong", "5555555", "55") == ["5555", "55555", "555555", "5555555"]


def test_seatenv_rules_opponents():
    """Item 11: opponents="rules" (an agent registry name) as the README lists it."""
    from cardenvs.wrappers import SeatEnv

    env = SeatEnv("doudizhu", 0, opponents="rules")
    obs, info = env.reset(seed=0)
    assert env.opponents[0] is None and env.opponents[1] is env.opponents[2]
    assert callable(env.opponents[1].act)
    done = False
    while not done:
        obs, reward, done, _, info = env.step(int(env.legal_actions()[0]))
    assert "final_rewards" in info
    with pytest.raises(ValueError, match="unknown opponent 'nobody'.*rules"):
        SeatEnv("doudizhu", 0, opponents="nobody")


# -- agents: keywords, weight files, priors, impossible states (issue 51) ------------------------


def _agents():
    from cardenvs.arena import import_agents

    return import_agents()


@pytest.mark.parametrize("spec,message", [
    ("search:ms=inf", r"agent 'search': ms must be a number in \(0, 600000\] or none, got inf"),
    ("search:ms=nan", r"agent 'search': ms must be a number in \(0, 600000\] or none, got nan"),
    ("search:ms=0", r"ms must be a number in \(0, 600000\]"),
    ("search:z=nan", r"agent 'search': z must be a number in \[0, 100\], got nan"),
    ("search:z=inf", r"z must be a number in \[0, 100\], got inf"),
    ("search:rollouts=100000000000",
     r"agent 'search': rollouts must be a positive int in \[1, 50000\] or none, got 100000000000"),
    ("search:rollouts=true", r"rollouts must be a positive int .* got True \(bool\)"),
    ("search:max_candidates=0", r"max_candidates must be a positive int in \[1, 10000\]"),
    ("search:epsilon=nan", r"epsilon must be a number in \[0, 1\], got nan"),
    ("search:margin=nan", r"margin must be a number in \[0, inf\], got nan"),
    ("search:margin=-1", r"margin must be a number in \[0, inf\], got -1"),
    ("trained+search:net_candidates=-1", r"agent 'trained\+search': net_candidates must be an "
                                         r"int in \[0, 10000\], got -1"),
    ("trained+search:z=nan", r"agent 'trained\+search': z must be a number in \[0, 100\]"),
    ("trained+search:rollouts=1e11", r"rollouts must be a positive int"),
])
def test_agent_keywords_out_of_range_name_the_keyword_and_range(spec, message):
    with pytest.raises(ValueError, match=message):
        _agents().make_agent(spec, "wakeng", seed=0)


def test_margin_inf_and_edges_are_accepted():
    a = _agents().make_agent("search:margin=inf,z=0,ms=600000,epsilon=1", "wakeng", seed=0)
    assert (a.margin, a.z, a.ms, a.epsilon) == (float("inf"), 0.0, 600000.0, 1.0)
    assert _agents().make_agent("search:rollouts=50000", "wakeng").rollouts == 50000


def test_check_keyword_is_the_one_check():
    from cardenvs.arena import import_agents

    check = importlib.import_module(import_agents().__name__ + ".base").check_keyword
    assert check("x", "k", 3, low=1, high=5, integer=True) == 3
    assert check("x", "k", None, low=1, high=5, optional=True) is None
    for bad, exc in [(np.bool_(True), "bool"), (2.0, "float"), ("3", "str")]:
        with pytest.raises(ValueError, match=f"agent 'x': k must be a positive int in "
                                             rf"\[1, 5\], got .* \({exc}\)"):
            check("x", "k", bad, low=1, high=5, integer=True)
    with pytest.raises(ValueError, match=r"k must be a number in \(0, 1\), got 1"):
        check("x", "k", 1, low=0, high=1, low_open=True, high_open=True)


def test_the_arena_refuses_a_bad_keyword_before_playing(tmp_path):
    from cardenvs.arena import run_arena

    with pytest.raises(ValueError, match=r"ms must be a number in \(0, 600000\]"):
        run_arena("wakeng", "search:ms=nan,rules", deals=2, seed=0, progress=False,
                  out_dir=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def bad_weights(tmp_path):
    from cardenvs.arena import import_agents

    trained = importlib.import_module(import_agents().__name__ + ".trained")
    files = {"garbage": tmp_path / "garbage.npz", "empty": tmp_path / "empty.npz",
             "folder": tmp_path / "folder.npz", "other_game": trained.default_weights_path("doudizhu"),
             "no_arrays": tmp_path / "meta_only.npz", "nan": tmp_path / "nan.npz"}
    files["garbage"].write_bytes(b"this is not a zip archive\n" * 4)
    files["empty"].write_bytes(b"")
    files["folder"].mkdir()
    np.savez(files["no_arrays"], meta=np.frombuffer(b'{"format": 1}', np.uint8))
    net = trained.QNetwork(trained.default_weights_path("wakeng"))
    layers = [(w.copy(), b.copy()) for w, b in net.layer_list()]
    layers[0][0][0, 0] = np.nan
    trained.save_weights(str(files["nan"]), layers, net.obs_dim, dict(net.meta), np.float32,
                         ctx_dim=net.ctx_dim)
    return files


@pytest.mark.parametrize("kind,reason", [
    ("garbage", "not a .npz archive"), ("empty", "the file is empty"),
    ("folder", "no weight file|it is a folder"), ("other_game", "the weights are for 'doudizhu'"),
    ("no_arrays", "no 'w_obs' array"), ("nan", "'w_obs' holds NaN or infinite values")])
def test_a_bad_weight_file_is_an_error_naming_it(bad_weights, kind, reason):
    """``trained:PATH``, ``trained+search:PATH`` and a search prior ``prior=trained:PATH``: a
    damaged or foreign file is a ValueError naming the file and what is wrong (a search prior
    was silently dropped before)."""
    path = str(bad_weights[kind])
    for spec in (f"trained:{path}", f"trained+search:{path}", f"search:prior=trained:{path}"):
        with pytest.raises(ValueError) as e:
            _agents().make_agent(spec, "wakeng", seed=0)
        assert repr(path) in str(e.value) and re.search(reason, str(e.value)), (spec, str(e.value))
        if spec.startswith("search:"):
            assert "prior='trained:" in str(e.value)


def test_the_default_prior_is_kept_and_a_named_one_must_play():
    ag = _agents()
    assert ag.make_agent("search", "wakeng", seed=0).prior_agent() is not None
    assert type(ag.make_agent("search:prior=rules", "wakeng").prior_agent()).__name__ == \
        "RulesAgent"
    with pytest.raises(ValueError, match="prior='nobody'.*unknown agent 'nobody'"):
        ag.make_agent("search:prior=nobody", "wakeng")


def _stuck_state(name: str):
    """A state ``check_state`` accepts (today) where the seat to move leads with no cards:
    its hand moved to its played pile (no play reaches it; it has no legal action)."""
    from cardenvs.api import make_game
    from cardenvs.core.state import CUR, LAST_ROW, PHASE, P_PLAY, played_off

    g = make_game(name)
    n = g.n_players
    buf = np.empty(g.n_actions, np.int64)
    rng = np.random.default_rng(0)
    s = g.new_state()
    g.reset(s, 0)
    while not (s[PHASE] == P_PLAY and s[LAST_ROW] < 0 and g.legal(s, buf) > 3):
        g.step(s, int(buf[rng.integers(g.legal(s, buf))]))
    q = int(s[CUR])
    s[played_off(n, q):played_off(n, q) + 16] += s[hand_off(q):hand_off(q) + 16]
    s[hand_off(q):hand_off(q) + 16] = 0
    return g, s, q


@pytest.mark.parametrize("spec", ["rollout", "search:rollouts=16"])
def test_search_agents_name_a_state_without_legal_actions(spec):
    """A rollout agent at such a state said ``attempt to get argmin of an empty sequence``."""
    g, s, q = _stuck_state("wakeng")
    agent = _agents().make_agent(spec, g, seed=0)
    message = (rf"agent '{spec.split(':')[0]}': the wakeng state leaves player_{q}, to move in "
               rf"phase 1, no legal action in an unfinished game")
    with pytest.raises(ValueError, match=message):
        agent.legal_of(s)
    with pytest.raises(ValueError) as e:  # check_state may refuse the state first
        agent.act(None, None, {"state": s})
    assert "argmin" not in str(e.value)
    with pytest.raises(ValueError) as e:
        agent.act_state(s, np.zeros(0, np.int64))
    assert "argmin" not in str(e.value)


def test_determinize_names_the_constraint_no_draw_met():
    from cardenvs.api import make_game
    from cardenvs.core.infostate import Constraint, determinize

    g = make_game("doudizhu")
    s = g.new_state()
    g.reset(s, 3)
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match=r"cannot determinize the doudizhu state for seat 0: "
                                           r"no 200,000 draws .* met the constraint that seat 1 "
                                           r"holds none of '3456789TJQKA2BR'"):
        determinize(g, s, 0, rng, {1: "3456789TJQKA2BR"})
    with pytest.raises(RuntimeError, match=r"met the constraint's accept function \(200,000 of "
                                           r"the last draws failed it\)"):
        determinize(g, s, 0, rng, Constraint(accept=lambda st: False))
    assert determinize(g, s, 0, rng, {1: "BR", 2: "BR"}).shape == s.shape  # possible: kept


def test_cli_demo_of_an_unknown_game_is_a_cardenvs_error(capsys):
    from cardenvs.cli import main

    assert main(["demo", "nope"]) == 2
    assert capsys.readouterr().err.startswith("cardenvs: error: unknown game 'nope'; choose from")
