"""Baseline agents: legality in every game, the rules agent's policy on literal positions,
and the RLCard adapter (its state translation and its choices)."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import numpy as np
import pytest

import cardenvs
from cardenvs.agents import AGENTS, agent_class, make_agent, register_agent
from cardenvs.agents.base import ObsReader
from cardenvs.agents.rules import PARTS, RulesAgent
from cardenvs.core.kernels import gen_legal
from helpers import alternate_deals, chosen_play, play_view

PLAIN_AGENTS = ("random", "rules", "rlcard")
SWEPT_AGENTS = PLAIN_AGENTS + ("trained",)
# deals per (game, agent) in the legality sweep: two-deck games have longer deals
DEALS = {"doudizhu": 30, "wakeng": 30, "doudizhu4": 10, "niangniang": 20}


def _env(game, **options):
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES[game]}").env(illegal="raise", **options)


@pytest.mark.parametrize("game", list(cardenvs.GAMES))
@pytest.mark.parametrize("name", SWEPT_AGENTS)
def test_agent_picks_only_legal_actions(game, name):
    env = _env(game)
    g = env.unwrapped.game
    try:
        cls = agent_class(name)
    except ValueError as e:
        pytest.skip(f"agent {name!r} is not available: {e}")
    reason = cls.unsupported(g)
    if reason is not None:
        pytest.skip(f"agent {name!r} does not play {game} (default options): {reason}")
    agent = make_agent(name, g, seed=1)
    other = make_agent("random", g, seed=2)
    made = alternate_deals(env, agent, other, DEALS.get(game, 10))
    assert made > 100


@pytest.mark.parametrize("game,options", [
    ("doudizhu", {"preset": "douzero"}),
    ("doudizhu", {"auction": "fixed", "all_pass": "redeal"}),
    ("wakeng", {"open_hand": True, "bombs": False}),
    ("wakeng", {"min_straight": 3, "min_pair_chain": 2, "reveal_kitty": True}),
    ("niangniang", {"first_niangniang": "reveal_choice", "joker_wild_scope": "bombs_only",
                    "huozi_scope": "bottom", "allow_trio_single": True}),
    ("niangniang", {"rank_order": "three_high", "match": True, "max_hands": 2,
                    "huozi_when": "last", "min_pair_chain": 3}),
    ("wulong", {"wild_jokers": "big_only", "joker_order": "first_played",
                "declare_must_include": "all"}),
    ("wulong", {"wild_jokers": "none", "play_to_completion": True, "first_lead": "C3"}),
])
def test_rules_agent_legal_with_options(game, options):
    env = _env(game, **options)
    g = env.unwrapped.game
    made = alternate_deals(env, make_agent("rules", g), make_agent("random", g, seed=3), 12)
    assert made > 50


def test_rules_agent_self_play_is_legal_and_deterministic():
    env = _env("wakeng")
    g = env.unwrapped.game
    a = make_agent("rules", g)
    histories = []
    for _ in range(2):
        alternate_deals(env, a, a, 5, seed=11)
        histories.append(list(env.unwrapped.history))
    assert histories[0] == histories[1]


def test_registry_errors():
    g = cardenvs.make_game("wakeng")
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        make_agent("nope", g)
    register_agent("ghost", "agents.ghost_agent:Ghost")
    try:
        with pytest.raises(ValueError, match="not available yet"):
            agent_class("ghost")
    finally:
        del AGENTS["ghost"]
    with pytest.raises(ValueError, match="3-player Dou Dizhu only"):
        make_agent("rlcard", g)
    with pytest.raises(ValueError, match="preset='rlcard'"):
        make_agent("rlcard", cardenvs.make_game("doudizhu"))
    assert set(PLAIN_AGENTS) <= set(AGENTS)


def test_act_batch_matches_masks():
    env = _env("doudizhu")
    g = env.unwrapped.game
    env.reset(seed=4)
    obs = env.observe(env.agent_selection)
    for name in ("random", "rules"):
        agent = make_agent(name, g, seed=0)
        acts = agent.act_batch(np.stack([obs["observation"]] * 5), np.stack([obs["action_mask"]] * 5))
        assert acts.shape == (5,)
        assert all(obs["action_mask"][a] == 1 for a in acts)
    with pytest.raises(ValueError, match="no legal action"):
        make_agent("random", g).act({"observation": obs["observation"],
                                     "action_mask": np.zeros_like(obs["action_mask"])})


# -- the rules agent's play policy on literal positions ---------------------------------------------
# Written from the rules page (doudizhu.md): ranks 3 < ... < A < 2 < B < R; a follow is the same
# type and length and higher, or a bomb/rocket.  Relative seats: 0 = the agent.


G3 = cardenvs.make_game("doudizhu")
R3 = RulesAgent(G3)


def _view(hand, *, others="", sizes=(17, 17, 17), beat=None, beat_seat=-1, solo=1):
    """A play-phase view for 3-player Dou Dizhu; ``solo`` is the landlord's relative seat."""
    d = G3.deck
    h = d.parse(hand)
    sizes = np.array([int(h.sum()), *sizes[1:]], np.int64)
    partners = np.zeros(3, bool)
    enemies = np.ones(3, bool)
    enemies[0] = False
    if solo != 0:
        partners[:] = True
        partners[[0, solo]] = False
        enemies[:] = False
        enemies[solo] = True
    prev = -1 if beat is None else G3.table.find(beat)
    full = d.full_counts() - h
    unseen = d.parse(others) if others else full
    out = np.empty(len(G3.table), np.int64)
    k = gen_legal(h, prev, G3.tab, out)
    return play_view(G3, h, unseen, sizes, beat_seat, prev, partners, enemies, out[:k])


def _play(v, legal):
    return chosen_play(R3, G3, v, legal)


def test_rules_goes_out_with_the_whole_hand():
    # TJQKA is one straight: playing it empties the hand
    assert _play(*_view("TJQKA", solo=0)) == "TJQKA"
    # following a lower straight with the whole hand
    assert _play(*_view("TJQKA", solo=0, beat="34567", beat_seat=1)) == "TJQKA"


def test_rules_never_beats_a_partner():
    # the partner (relative seat 2; landlord at 1) led a 5; 9 could beat it
    assert _play(*_view("9JJQQKK", beat="5", beat_seat=2, solo=1)) == "pass"


def test_rules_beats_an_enemy_without_breaking_a_chain():
    # the landlord led a 5; JJQQKK is a pair chain, the lone 9 is the plan's single
    assert _play(*_view("9JJQQKK", beat="5", beat_seat=1, solo=1)) == "9"


def test_rules_leads_the_weakest_combination_first():
    # no chains: singles 3, K, 2 and a pair of 4s; the lowest single goes first
    assert _play(*_view("344K2", solo=0)) == "3"
    # the straight 34567 (holding the 3) goes before the lone 9
    assert _play(*_view("345679", solo=0)) == "34567"


def test_rules_does_not_lead_a_single_into_a_one_card_enemy():
    # I am the landlord; a farmer (relative seat 1) holds one card: lead the pair, not the 3
    assert _play(*_view("344K", solo=0, sizes=(0, 1, 17))) == "44"


def test_rules_leads_low_to_a_partner_with_one_card():
    # I am a farmer; my partner (relative seat 2) holds one card: lead my lowest single
    assert _play(*_view("34499JJ", solo=1, sizes=(0, 15, 1))) == "3"


def test_rules_bombs_to_stop_an_enemy_about_to_go_out():
    # the landlord (seat 1) has one card left after playing a 2; my bomb 7777 stops him
    assert _play(*_view("37777", beat="2", beat_seat=1, solo=1, sizes=(0, 1, 10))) == "7777"
    # with the landlord far from out, the bomb is kept
    assert _play(*_view("3777789", beat="2", beat_seat=1, solo=1, sizes=(0, 12, 10))) == "pass"


def test_rules_cashes_a_sure_winner_before_the_last_card():
    # hand 3 and 2; no one else can hold B, R, a 2 or a bomb: the 2 wins its trick, then 3 goes
    unseen = "445566778899TTJJQQKKAA"
    assert _play(*_view("32", others=unseen, solo=0, sizes=(0, 11, 11))) == "2"
    # with the red joker unseen the 2 is not sure: lead the weak 3 first
    assert _play(*_view("32", others=unseen + "R", solo=0, sizes=(0, 11, 12))) == "3"


def _rest(deck, *given):
    """The cards of the deck not in ``given`` (to complete a custom deal)."""
    left = deck.full_counts()
    for cards in given:
        left = left - deck.parse(cards)
    assert (left >= 0).all()
    return deck.format(left)


def test_rules_bids_by_hand_strength():
    env = _env("doudizhu")
    strong, weak, kitty = "BR2222AAKKQQJJT98", "33445667889TTJQQK", "456"
    env.reset(seed=0, options={"hands": [strong, weak, _rest(G3.deck, strong, weak, kitty)],
                               "kitty": kitty, "first_bidder": 0})
    # both jokers, four 2s and pairs: the top bid
    assert env.action_to_string(R3.act(env.observe("player_0"), env.legal_actions())) == "bid 3"
    env.unwrapped.reset(seed=0, options={"hands": [strong, weak, _rest(G3.deck, strong, weak,
                                                                          kitty)],
                                         "kitty": kitty, "first_bidder": 1})
    # no card above K, no chain: pass
    assert env.action_to_string(R3.act(env.observe("player_1"), env.legal_actions())) == "pass"


def test_rules_wakeng_buries_loose_cards_and_keeps_controls():
    env = _env("wakeng")
    # rank order 4 < 5 < ... < A < 2 < 3.  The digger (seat 0) holds the straight 6..J, the
    # pair chain QQKKAA, a third A, 22 and a 3; the kitty brings 4 4 2 3.  The loose cards are
    # the low pair 44 (no 5 to chain with) and the odd A; the 2s and 3s (above every chain)
    # must stay.
    digger = "S6 S7 S8 S9 ST SJ HQ CQ HK CK HA CA SA S2 H2 S3"
    kitty = "H4 C4 D2 D3"
    used = set((digger + " " + kitty).split())
    rest = [s + r for r in "456789TJQKA23" for s in "SHCD" if s + r not in used]
    hands = [digger, " ".join(rest[:16]), " ".join(rest[16:])]
    env.reset(seed=0, options={"hands": hands, "kitty": kitty, "digger": 0, "bid": 1})
    agent = make_agent("rules", env.unwrapped.game)
    picks = []
    for _ in range(4):
        a = agent.act(env.observe("player_0"), env.legal_actions())
        picks.append(env.action_to_string(a))
        env.step(a)
    assert picks.count("bury 4") == 2 and "bury A" in picks, picks
    assert not any(p[-1] in "23" for p in picks), picks


def test_parts_cover_the_supported_games():
    for name in ("doudizhu", "doudizhu4", "wakeng", "niangniang", "wulong"):
        assert name in PARTS
        assert RulesAgent.unsupported(cardenvs.make_game(name)) is None


def test_obs_reader_round_trips_the_hand():
    env = _env("doudizhu4")
    env.reset(seed=3)
    g = env.unwrapped.game
    r = ObsReader(g)
    from cardenvs.core.state import hand_off

    for seat in range(4):
        obs = env.observe(f"player_{seat}")["observation"]
        s = env.unwrapped.state_vec
        assert (r.cards(obs, "hand") == s[hand_off(seat):hand_off(seat) + 16]).all()


# -- RLCard's rule model -----------------------------------------------------------------------------


rlcard = pytest.importorskip("rlcard")


def test_rlcard_agent_plays_legal_moves():
    for options in ({"auction": "fixed"}, {"auction": "bid"}):
        env = _env("doudizhu", preset="rlcard", **options)
        g = env.unwrapped.game
        made = alternate_deals(env, make_agent("rlcard", g, seed=5), make_agent("random", g, seed=6), 25)
        assert made > 100


def test_rlcard_follow_order_is_rlcards():
    """Our legal actions, put in RLCard's order, equal RLCard's own get_gt_cards list."""
    from rlcard.games.doudizhu.utils import get_gt_cards

    g = cardenvs.make_game("doudizhu", preset="rlcard")
    agent = make_agent("rlcard", g)
    rng = np.random.default_rng(0)
    deck = np.repeat(np.arange(15), g.deck.copies)
    out = np.empty(len(g.table), np.int64)
    checked = 0
    while checked < 60:
        cards = rng.permutation(deck)
        hand = np.bincount(cards[:17], minlength=16).astype(np.int64)
        other = np.bincount(cards[17:37], minlength=16).astype(np.int64)
        k = gen_legal(other, -1, g.tab, out)
        prev = int(out[rng.integers(k)])
        target = g.deck.format(g.tab.counts[prev])
        k = gen_legal(hand, prev, g.tab, out)
        ours = [g.deck.format(g.tab.counts[a]) for a in out[:k]] + ["pass"]
        me = SimpleNamespace(current_hand=[SimpleNamespace(rank=c, suit="")
                                           for c in g.deck.format(hand)])
        theirs = get_gt_cards(me, SimpleNamespace(played_cards=target))
        assert agent._follow_order(target, ours) == theirs
        checked += k > 0


def _rl_state(h0, h1, kitty, moves):
    env = _env("doudizhu", preset="rlcard")
    g = env.unwrapped.game
    env.reset(seed=0, options={"hands": [h0, h1, _rest(g.deck, h0, h1, kitty)], "kitty": kitty,
                               "landlord": 0, "bid": 1})
    for m in moves:
        env.step(env.string_to_action(m))
    return env


def test_rlcard_agent_leads_the_combination_with_its_lowest_card():
    # RLCard's rule: on a lead, play the first combination (rocket, bomb, trio, trio chain,
    # straight, ...) of its split holding the smallest card.  Hand + kitty: 34567 999 JJQQ KK
    # AA T 222 -> trios 999 and 222, straights 34567 and TJQKA: the 3 is in 34567
    env = _rl_state("34567999JJQQKA222", "3344556677889TTTJ", "KAT", [])
    agent = make_agent("rlcard", env.unwrapped.game)
    a = agent.act(env.observe("player_0"), env.legal_actions())
    assert env.action_to_string(a) == "34567"


def test_rlcard_agent_follows_with_the_smallest_play_of_the_type():
    # the landlord leads a single 5; the farmer's smallest single above it is 6
    env = _rl_state("345678JJQQKA222BR", "34677889TTJJQQKK9", "AAK", ["5"])
    agent = make_agent("rlcard", env.unwrapped.game)
    a = agent.act(env.observe("player_1"), env.legal_actions())
    assert env.action_to_string(a) == "6"
    raw = agent.raw_state(env.observe("player_1")["observation"], env.legal_actions())
    assert raw["trace"] == [(2, "5")] and raw["landlord"] == 2 and raw["self"] == 0
    assert raw["current_hand"] == "346778899TTJJQQKK"


def test_trained_weights_are_the_files_the_registry_names():
    """``trained`` loads the file the game's registry record names (``agents/weights/<game>.npz``
    when it names none): in all six games its network-only agent (stronger than the override
    files; all with context inputs), so ``trained`` and
    ``search``'s default prior play by the network in every decision."""
    import os

    from cardenvs.agents.trained import WEIGHTS_DIR, default_weights_path
    from cardenvs.registry import REGISTRY

    for name, spec in REGISTRY.items():
        path = default_weights_path(name)
        assert path == os.path.join(WEIGHTS_DIR, spec.trained_weights or f"{name}.npz")
        assert os.path.exists(path), path
    contexts = {"doudizhu": "plan", "doudizhu4": "plan", "paodekuai": "plan",
                "niangniang": "plan", "wulong": "plan", "wakeng": "plan_picks"}
    assert sorted(contexts) == sorted(REGISTRY)
    for name, context in contexts.items():
        g = cardenvs.make_game(name)
        agent = make_agent("trained", g)
        assert os.path.basename(agent.path) == f"{name}_network.npz"
        assert (agent.context.name if agent.context is not None else None) == context
        prior = make_agent("search", g)._prior
        assert prior is not None and os.path.basename(prior.path) == f"{name}_network.npz"
    # Wakeng's network: the 76-minute file (a fit to an override file's labels, three rounds of
    # search's labels with rules' burials, a fourth played against rules opponents) fine-tuned
    # for 78 minutes on its own score (train.finetune): 154 minutes of commands
    net = make_agent("trained", "wakeng").net.meta
    assert net["trainer"] == "finetune" and net["wall_minutes"] == 154
    assert net["init"].startswith("the former wakeng_network.npz (commit 168e34d")
    assert net["iterations"] == 1050 and net["settings"]["max_iterations"] == 1050
    assert "--opponent rules" in net["command"] and "train.finetune wakeng" in net["command"]
    # the files shipped: the registry's one per game and the one the results page plays
    # against RLCard's rule model (the former override files and other steps are gone)
    shipped = sorted(f for f in os.listdir(WEIGHTS_DIR) if f.endswith(".npz"))
    assert shipped == sorted({s.trained_weights for s in REGISTRY.values()}
                             | {"doudizhu_rlcard_network.npz"})
    # Dou Dizhu's: its distilled network fine-tuned 708 iterations on its own score
    ft = make_agent("trained", "doudizhu").net.meta
    assert ft["trainer"] == "finetune" and ft["iterations"] == 708 and ft["wall_minutes"] == 126
    assert ft["init"].startswith("the former doudizhu_network.npz") and "doudizhu_distill.npz" in ft["init"]
    assert ft["settings"]["train_dtype"] == "bfloat16" and ft["opponent"] == "heuristic"
    assert "train.finetune doudizhu --init agents/weights/doudizhu_distill.npz" in ft["command"]
    pdk = make_agent("trained", "paodekuai").net.meta
    assert pdk["context"] == "plan" and pdk["data"] == ["pdk_s4"] and "former" in pdk["init"]
    # Da Niangniang's network: made from scratch in 86 minutes (a fit to the override file's
    # labels, then four rounds of search's labels, every fit with the context inputs)
    nn = make_agent("trained", "niangniang").net.meta
    assert nn["data"] == ["nn2/s1", "nn2/s2", "nn2/s3", "nn2/s4"] and nn["wall_minutes"] == 86
    assert nn["init"].startswith("runs/nn2/ft/") and nn["decisions"] == 297919
