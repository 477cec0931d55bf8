"""The ``douzero`` and ``rlcard`` presets of 3-player Dou Dizhu against the installed packages.

``preset="douzero"`` must give exactly the legal plays of DouZero 1.1
(``douzero.env.game.GameEnv.get_legal_card_play_actions``: detector + generator + selector)
and ``preset="rlcard"`` exactly those of RLCard 1.2 (``DoudizhuJudger.playable_cards_from_hand``
for a free lead, ``utils.get_gt_cards`` against a play), compared as sets of card multisets on
random hands (1..20 cards of the 54-card deck), for free leads and against a previous play of
every family and length.  Structural checks cover the whole table: RLCard's vocabulary and
weights, DouZero's generator output per type on the full deck, its detector's reading of every
row and its selector's comparison inside every class.  Literal examples of each quirk are
written from reading the packages' code (not from this project's output).

Each package is optional: its tests skip when it is not installed.
"""

from __future__ import annotations

import collections
from types import SimpleNamespace

import numpy as np
import pytest

from cardenvs.api import legal_moves
from cardenvs.core.combos import (
    AIRPLANE, AIRPLANE_PAIRS, AIRPLANE_SINGLES, BOMB, FAMILY_NAMES, FOUR_TWO_PAIRS,
    FOUR_TWO_SINGLES, PAIR, PAIR_CHAIN, ROCKET, SINGLE, STRAIGHT, TRIO, TRIO_PAIR, TRIO_SINGLE,
)
from cardenvs.core.kernels import gen_legal
from cardenvs.core.state import LAST_ROW, hand_off
from cardenvs.games.doudizhu import play_table
from cardenvs.games.doudizhu_presets import douzero_reading

ORDER = "3456789TJQKA2BR"
COPIES = np.array([4] * 13 + [1, 1] + [0], np.int64)  # 16 slots
#: DouZero's card values of our rank indices (3..A = 3..14, 2 = 17, jokers 20 / 30)
DZ_VALUE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 20, 30]
DZ_INDEX = {v: i for i, v in enumerate(DZ_VALUE)}
FULL_DZ = [v for i, v in enumerate(DZ_VALUE) for _ in range(int(COPIES[i]))]

# DouZero move types (douzero.env.utils) -> our families
DZ_FAMILY = {1: SINGLE, 2: PAIR, 3: TRIO, 4: BOMB, 5: ROCKET, 6: TRIO_SINGLE, 7: TRIO_PAIR,
             8: STRAIGHT, 9: PAIR_CHAIN, 10: AIRPLANE, 11: AIRPLANE_SINGLES, 12: AIRPLANE_PAIRS,
             13: FOUR_TWO_SINGLES, 14: FOUR_TWO_PAIRS}
DZ_WRONG = 15


# -- helpers ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dz():
    """DouZero's env modules (skips when douzero is absent)."""
    pytest.importorskip("douzero")
    from douzero.env import game, move_detector, move_generator, move_selector

    return SimpleNamespace(game=game, md=move_detector, mg=move_generator, ms=move_selector)


@pytest.fixture(scope="module")
def rl():
    """RLCard's Dou Dizhu judger and utils (skips when rlcard is absent)."""
    pytest.importorskip("rlcard")
    from rlcard.games.doudizhu import judger, utils

    return SimpleNamespace(judger=judger.DoudizhuJudger, utils=utils)


def cards_str(counts) -> str:
    return "".join(ORDER[r] * int(counts[r]) for r in range(15))


def counts_of_str(s: str) -> tuple:
    c = [0] * 16
    for ch in s:
        c[ORDER.index(ch)] += 1
    return tuple(c)


def dz_list(counts) -> list[int]:
    return [DZ_VALUE[r] for r in range(15) for _ in range(int(counts[r]))]


def counts_of_dz(move) -> tuple:
    c = [0] * 16
    for v in move:
        c[DZ_INDEX[v]] += 1
    return tuple(c)


def deal(rng, n: int, avail: np.ndarray, base=None) -> np.ndarray:
    """A hand of ``n`` cards drawn from ``avail`` (counts), containing ``base`` if given."""
    hand = np.zeros(16, np.int64) if base is None else np.array(base, np.int64)
    rest = avail - hand
    pool = np.repeat(np.arange(16), rest)
    k = max(0, min(n - int(hand.sum()), len(pool)))
    for r in rng.choice(pool, k, replace=False):
        hand[r] += 1
    return hand


def ours(table, hand, prev_row: int) -> set:
    """Our legal card sets (pass excluded) from the numba generator."""
    out = np.empty(len(table), np.int64)
    k = gen_legal(np.asarray(hand, np.int64), prev_row, table.arrays, out)
    return {table.plays[r].counts for r in out[:k]}


def dz_legal(dz, hand, prev_counts) -> set:
    """DouZero's legal card sets (pass excluded) through GameEnv.get_legal_card_play_actions."""
    seq = [] if prev_counts is None else [dz_list(prev_counts)]
    fake = SimpleNamespace(
        info_sets={"landlord": SimpleNamespace(player_hand_cards=dz_list(hand))},
        acting_player_position="landlord", card_play_action_seq=seq)
    moves = dz.game.GameEnv.get_legal_card_play_actions(fake)
    return {counts_of_dz(m) for m in moves if m}


def rl_legal(rl, hand, prev_counts) -> set:
    """RLCard's legal card sets (pass excluded): the judger (free lead) or get_gt_cards."""
    hs = cards_str(hand)
    if prev_counts is None:
        got = rl.judger.playable_cards_from_hand(hs)
    else:
        cards = [SimpleNamespace(rank="", suit=ch + "J") if ch in "BR"
                 else SimpleNamespace(rank=ch, suit="S") for ch in hs]
        player = SimpleNamespace(current_hand=cards)
        greater = SimpleNamespace(played_cards=cards_str(prev_counts))
        got = [c for c in rl.utils.get_gt_cards(player, greater) if c != "pass"]
    return {counts_of_str(s) for s in got}


def own_reading(p):
    """What a follower must beat after ``p`` when the preset keeps every play's own reading."""
    return (p.family, p.length, p.key)


def random_positions(table, rng, n_per_class: int, n_free: int, reading=own_reading):
    """``(hand, prev_row)`` positions: free leads, then ``n_per_class`` per rival class.

    Rival classes are the rows' (family, length), split further by what a follower must beat
    when the preset reads the cards otherwise (``reading(play)``: ``False`` = only bombs, or
    ``(family, length, key)``).  Half of the follower hands are built around a random play of
    the class to beat with a higher key (a bomb when there is none), so that beating plays
    occur often.
    """
    full = COPIES.copy()
    positions = [(deal(rng, int(rng.integers(1, 21)), full), -1) for _ in range(n_free)]
    members = collections.defaultdict(list)
    by_class = collections.defaultdict(list)
    target = {}
    for i, p in enumerate(table.plays):
        members[(p.family, p.length)].append(i)
        r = reading(p)
        if r is False or r[0] in (BOMB, ROCKET):
            beat = "bombs only" if r is False else "own"
            target[i] = (BOMB, 0, -1)
        else:
            beat = "own" if r[:2] == (p.family, p.length) else \
                f"read as {FAMILY_NAMES[r[0]]} {r[1]}"
            target[i] = tuple(r)
        by_class[(FAMILY_NAMES[p.family], p.length, beat)].append(i)
    members[(BOMB, 0)] += members[(ROCKET, 0)]
    counts = {}
    for cls, rows in sorted(by_class.items()):
        counts[cls] = n_per_class
        for _ in range(n_per_class):
            prev = int(rows[rng.integers(len(rows))])
            avail = full - np.array(table.plays[prev].counts, np.int64)
            base = None
            if rng.random() < 0.5:
                fam, length, key = target[prev]
                pool = [q for q in members[(fam, length)] if table.plays[q].key > key] or \
                    members[(BOMB, 0)]
                for _try in range(10):
                    cand = np.array(table.plays[int(pool[rng.integers(len(pool))])].counts)
                    if np.all(cand <= avail):
                        base = cand
                        break
            n = int(rng.integers(1, 21))
            if base is not None:
                n = max(n, int(base.sum()))
            positions.append((deal(rng, n, avail, base), prev))
    return positions, counts


def check_positions(table, positions, reference) -> tuple[int, int]:
    """Compare every position; returns (positions, positions with a non-bomb follow)."""
    nontrivial = 0
    for hand, prev in positions:
        prev_counts = None if prev < 0 else table.plays[prev].counts
        want = reference(hand, prev_counts)
        got = ours(table, hand, prev)
        if got != want:
            extra = sorted(cards_str(c) for c in got - want)
            missing = sorted(cards_str(c) for c in want - got)
            prev_s = "free lead" if prev < 0 else table.reading(prev)
            raise AssertionError(
                f"hand {cards_str(hand)} vs {prev_s}: extra {extra[:8]} missing {missing[:8]}")
        if prev >= 0 and any(table.plays[r].bomb_power == 0
                             for c in got for r in table.rows_of_cards(c)):
            nontrivial += 1
    return len(positions), nontrivial


def report(name, counts, n, nontrivial):
    print(f"\n{name}: {n} positions, {nontrivial} follows with a non-bomb answer; per class:")
    for cls, k in counts.items():
        print(f"  {cls}: {k}")




def test_lone_kicker_rows_are_tested_on_free_leads():
    """A kicker row alone in its table group (DouZero keys make such groups) is only offered
    when the hand holds its kickers too, not just its body."""
    table = play_table(3, "douzero")
    a = table.arrays
    lone = [a.g_start[g] for g in range(len(a.g_start))
            if a.g_end[g] - a.g_start[g] == 1
            and table.plays[a.g_start[g]].body != table.plays[a.g_start[g]].counts]
    assert lone, "the douzero table has one-row groups of kicker rows"
    row = int(lone[0])
    p = table.plays[row]
    body_only = table.deck.format(p.body)
    assert table.deck.format(p.counts) not in legal_moves("doudizhu", body_only, preset="douzero")
    assert table.deck.format(p.counts) in legal_moves("doudizhu", table.deck.format(p.counts),
                                                      preset="douzero")


# -- RLCard ----------------------------------------------------------------------------------------

RL_FAMILY = {"solo": SINGLE, "pair": PAIR, "trio": TRIO, "trio_solo": TRIO_SINGLE,
             "trio_pair": TRIO_PAIR, "solo_chain": STRAIGHT, "pair_chain": PAIR_CHAIN,
             "trio_chain": AIRPLANE, "trio_solo_chain": AIRPLANE_SINGLES,
             "trio_pair_chain": AIRPLANE_PAIRS, "four_two_solo": FOUR_TWO_SINGLES,
             "four_two_pair": FOUR_TWO_PAIRS, "bomb": BOMB, "rocket": ROCKET}


def rl_type(name: str) -> tuple[int, int]:
    """RLCard type name -> (family, length), e.g. ``trio_solo_chain_3`` -> (8, 3)."""
    base, _, tail = name.rpartition("_")
    if tail.isdigit():
        return RL_FAMILY[base], int(tail)
    fam = RL_FAMILY[name]
    return fam, 0 if fam in (BOMB, ROCKET) else 1


def test_rlcard_vocabulary(rl):
    table = play_table(3, "rlcard")
    assert len(table) == 27471
    vocab = [a for a in rl.utils.ACTION_2_ID if a != "pass"]
    assert len(vocab) == 27471 and len(rl.utils.ACTION_2_ID) == 27472
    mine = [cards_str(p.counts) for p in table.plays]
    assert len(set(mine)) == len(mine), "an RLCard card string has one reading"
    assert set(mine) == set(vocab)


def test_rlcard_types_and_weights(rl):
    """Same type <=> same (family, length); within a type our keys order plays as the weights."""
    table = play_table(3, "rlcard")
    card_type = rl.utils.CARD_TYPE[0]
    per_type = collections.defaultdict(list)
    for p in table.plays:
        types = card_type[cards_str(p.counts)]
        assert len(types) == 1
        name, weight = types[0]
        assert rl_type(name) == (p.family, p.length), (cards_str(p.counts), name)
        per_type[name].append((p.key, int(weight)))
    assert len(per_type) == 37
    for name, kw in per_type.items():
        kw.sort()
        for (k1, w1), (k2, w2) in zip(kw, kw[1:]):
            assert (k1 < k2) == (w1 < w2) and (k1 == k2) == (w1 == w2), name
    # trio_solo_chain weight = chain start + 1 whatever the kickers (read from card_type.json)
    assert card_type["333444555777"] == [["trio_solo_chain_3", "1"]]
    assert card_type["QQQKKKAAA222"] == [["trio_solo_chain_3", "10"]]


def test_rlcard_random_positions(rl):
    table = play_table(3, "rlcard")
    rng = np.random.default_rng(20240611)
    positions, counts = random_positions(table, rng, n_per_class=150, n_free=4000)
    n, nontrivial = check_positions(table, positions, lambda h, p: rl_legal(rl, h, p))
    report("rlcard", counts, n, nontrivial)
    assert len(counts) == 37 and nontrivial > 1000


def test_rlcard_quirks(rl):
    table = play_table(3, "rlcard")
    seed = play_table(3, "seed")
    # a kicker trio next to the chain does not exist: the cards are only the 4-trio airplane
    assert [table.reading(r) for r in table.rows_of_cards(counts_of_str("333444555666"))] == \
        ["airplane of 4 333444555666"]
    assert len(seed.rows_of_cards(counts_of_str("333444555666"))) == 3
    assert table.rows_of_cards(counts_of_str("3334445556667778")) == []
    assert seed.rows_of_cards(counts_of_str("3334445556667778")) != []
    # ... except three 2s next to a chain ending at A, and non-adjacent trios
    assert table.find("QQQKKKAAA+222") >= 0
    assert table.find("333444555+777") >= 0
    # no four of a kind, no BR among kickers; four + two never carries BR
    for text in ("333444555666+7777", "333444+BR", "3333+BR"):
        with pytest.raises(ValueError):
            table.find(text)
    # the free lead of 333444555666: the airplane, and no 3-trio airplane with a trio kicker
    lead = legal_moves("doudizhu", "333444555666", preset="rlcard")
    assert "333444555666" in lead and "3334445556" not in lead
    # the same through RLCard itself
    assert rl_legal(rl, counts_of_str("333444555666"), None) == \
        {counts_of_str(s) for s in lead}
    # follows compare by the chain, kicker trios do not count
    got = legal_moves("doudizhu", "6667778889TQ", "333444555JJJ", preset="rlcard")
    assert got == ["6667778889TQ"]


# -- DouZero ---------------------------------------------------------------------------------------


def test_douzero_generators_match_classes(dz):
    """Each DouZero generator on the full deck gives exactly the card sets of one class."""
    table = play_table(3, "douzero")
    cls = collections.defaultdict(set)
    for p in table.plays:
        cls[(p.family, p.length)].add(p.counts)
    mg = dz.mg.MovesGener(list(FULL_DZ))

    def same(moves, fam, length):
        got = {counts_of_dz(m) for m in moves if len(m) <= 20}
        assert got == cls[(fam, length)], (FAMILY_NAMES[fam], length)

    same(mg.gen_type_1_single(), SINGLE, 1)
    same(mg.gen_type_2_pair(), PAIR, 1)
    same(mg.gen_type_3_triple(), TRIO, 1)
    same(mg.gen_type_4_bomb(), BOMB, 0)
    same(mg.gen_type_5_king_bomb(), ROCKET, 0)
    same(mg.gen_type_6_3_1(), TRIO_SINGLE, 1)
    same(mg.gen_type_7_3_2(), TRIO_PAIR, 1)
    same(mg.gen_type_13_4_2(), FOUR_TWO_SINGLES, 1)
    same(mg.gen_type_14_4_22(), FOUR_TWO_PAIRS, 1)
    for length in range(5, 13):
        same(mg.gen_type_8_serial_single(repeat_num=length), STRAIGHT, length)
    for length in range(3, 11):
        same(mg.gen_type_9_serial_pair(repeat_num=length), PAIR_CHAIN, length)
    for length in range(2, 7):
        same(mg.gen_type_10_serial_triple(repeat_num=length), AIRPLANE, length)
    for length in range(2, 5):
        same(mg.gen_type_12_serial_3_2(repeat_num=length), AIRPLANE_PAIRS, length)
    for length in (2, 3):  # 4 and 5 take 2.5 s / 11 s on the full deck: random positions cover them
        same(mg.gen_type_11_serial_3_1(repeat_num=length), AIRPLANE_SINGLES, length)
    classes = {k for k in cls}
    assert len(classes) == 37 and len(table) == 29993
    assert len({p.counts for p in table.plays}) == 29984


def test_douzero_detector_reads_every_row(dz):
    """Our follow reading of every row is DouZero's detector type and length."""
    table = play_table(3, "douzero")
    a = table.arrays
    first_bomb_group = int(a.group[np.flatnonzero(a.power > 0).min()])
    seen = collections.Counter()
    for i, p in enumerate(table.plays):
        got = dz.md.get_move_type(dz_list(p.counts))
        t = got["type"]
        mine = douzero_reading(p.counts)
        if t == DZ_WRONG:
            assert mine is False and a.fnext[i] == a.fend[i] and p.bomb_power == 0
            assert a.bnext[i] == first_bomb_group  # every bomb and the rocket
            seen["wrong"] += 1
            continue
        assert mine is not False
        assert mine[0] == DZ_FAMILY[t], (table.reading(i), got)
        if t in (8, 9, 10, 11, 12):
            assert mine[1] == got["len"], (table.reading(i), got)
        seen[(mine[0], mine[0] == p.family)] += 1
    assert seen["wrong"] == 811 + 3027
    assert seen[(AIRPLANE, False)] == 9


def _dz_filter(dz, t: int):
    ms = dz.ms
    return {1: ms.filter_type_1_single, 2: ms.filter_type_2_pair, 3: ms.filter_type_3_triple,
            4: ms.filter_type_4_bomb, 6: ms.filter_type_6_3_1, 7: ms.filter_type_7_3_2,
            8: ms.filter_type_8_serial_single, 9: ms.filter_type_9_serial_pair,
            10: ms.filter_type_10_serial_triple, 11: ms.filter_type_11_serial_3_1,
            12: ms.filter_type_12_serial_3_2, 13: ms.filter_type_13_4_2,
            14: ms.filter_type_14_4_22}[t]


def test_douzero_selector_order_in_every_class(dz):
    """Against a rival of each class, DouZero's selector keeps exactly our rows with a higher key.

    The candidates are the whole class (every card set DouZero's generator of that type and
    length can produce, checked above); rivals are sampled among the rows read into the class,
    always including the lowest and highest compare keys and every overridden row's card set
    kind (e.g. ``333444555+666`` read as an airplane).
    """
    table = play_table(3, "douzero")
    a = table.arrays
    rng = np.random.default_rng(7)
    members = collections.defaultdict(list)  # class -> rows in it
    rivals = collections.defaultdict(list)  # class -> rows whose follower must play in it
    for i, p in enumerate(table.plays):
        members[(p.family, p.length)].append(i)
        r = douzero_reading(p.counts)
        if r is not False:
            rivals[(r[0], r[1])].append(i)
    n_checked = 0
    for (fam, length), rows in rivals.items():
        if fam in (BOMB, ROCKET):
            continue
        pick = set(rng.choice(rows, min(6, len(rows)), replace=False).tolist())
        keys = [douzero_reading(table.plays[r].counts)[2] for r in rows]
        pick |= {rows[int(np.argmin(keys))], rows[int(np.argmax(keys))]}
        pick |= {r for r in rows if table.plays[r].family != fam}
        cand_rows = members[(fam, length)]
        for r in sorted(pick):
            rival = dz_list(table.plays[r].counts)
            t = dz.md.get_move_type(list(rival))["type"]
            kept = _dz_filter(dz, t)([dz_list(table.plays[c].counts) for c in cand_rows],
                                     list(rival))
            want = {counts_of_dz(m) for m in kept}
            out = np.empty(len(table), np.int64)
            k = gen_legal(COPIES, r, a, out)  # a hand holding the whole deck
            got = {table.plays[c].counts for c in out[:k]
                   if (table.plays[c].family, table.plays[c].length) == (fam, length)}
            assert got == want, table.reading(r)
            n_checked += 1
    print(f"\nselector checks: {n_checked}")
    assert n_checked > 150


def test_douzero_random_positions(dz):
    table = play_table(3, "douzero")
    rng = np.random.default_rng(20240612)
    positions, counts = random_positions(table, rng, n_per_class=150, n_free=4000,
                                         reading=lambda p: douzero_reading(p.counts))
    n, nontrivial = check_positions(table, positions, lambda h, p: dz_legal(dz, h, p))
    report("douzero", counts, n, nontrivial)
    assert len(counts) == 37 + 3 and nontrivial > 1000


def test_douzero_quirks(dz):
    def moves(hand, prev=None, prev_type=None):
        return legal_moves("doudizhu", hand, prev, prev_type=prev_type, preset="douzero")

    def dz_moves(hand, prev=None):
        return {cards_str(c) for c in dz_legal(dz, counts_of_str(hand),
                                               None if prev is None else counts_of_str(prev))}

    # airplane + singles: four of a kind and both jokers as kickers; four + two with BR
    lead = moves("3334445556667777")
    assert "3334445556667777" in lead
    assert "3334445556667777" not in legal_moves("doudizhu", "3334445556667777")
    assert "333444BR" in moves("333444BR")
    assert "3333BR" in moves("3333BR")
    # the detector reads 333444555+666 as the 4-trio airplane, whichever way it was played
    want = ["777888999TTT"]
    assert moves("777888999TTTJQKA", "333444555666", prev_type="airplane_singles") == want
    assert moves("777888999TTTJQKA", "333444555666", prev_type="airplane") == want
    assert dz_moves("777888999TTTJQKA", "333444555666") == set(want)
    seed_moves = legal_moves("doudizhu", "777888999TTTJQKA", "333444555+666")
    assert "777888999TTT" in seed_moves and "888999TTTJQK" in seed_moves
    # a kicker trio sets the compare rank: 333444555+JJJ has rank J, so 666777888+9TQ (rank 8)
    # does not beat it but 666777888+KKK (rank K) does; the seed rules compare chains
    assert moves("6667778889TQ", "333444555JJJ", "airplane_singles") == []
    assert legal_moves("doudizhu", "6667778889TQ", "333444555+JJJ") == ["6667778889TQ"]
    assert moves("666777888KKK", "333444555JJJ", "airplane_singles") == ["666777888KKK"]
    assert dz_moves("666777888KKK", "333444555JJJ") == {"666777888KKK"}
    assert dz_moves("6667778889TQ", "333444555JJJ") == set()
    # unreadable (TYPE_15_WRONG): a kicker trio in a 4-trio airplane; only bombs/rocket follow
    prev = "333444555666+AAAK"
    assert moves("777888999TTTJQ2BR", prev) == ["BR"]
    assert dz_moves("777888999TTTJQ2BR", "333444555666KAAA") == {"BR"}
    seed_moves = legal_moves("doudizhu", "777888999TTTJQ2BR", prev)
    assert "BR" in seed_moves and "777888999TTTJQ2B" in seed_moves
    # four + two with BR is a four + two: a higher four + two, bombs and the rocket beat it
    assert moves("444456", "3333BR") == ["4444", "444456"]
    assert dz_moves("444456", "3333BR") == {"4444", "444456"}
    assert moves("4444BR", "333356") == ["BR", "4444", "4444BR"]
    assert legal_moves("doudizhu", "4444BR", "333356") == ["BR", "4444"]
    with pytest.raises(ValueError):
        legal_moves("doudizhu", "444456", "3333BR")


def test_preset_env_legal_actions(dz, rl):
    """The env's legal actions along random games equal the packages' legal plays."""
    from cardenvs import doudizhu_v0

    rng = np.random.default_rng(3)
    for preset, reference in (("douzero", lambda h, p: dz_legal(dz, h, p)),
                              ("rlcard", lambda h, p: rl_legal(rl, h, p))):
        env = doudizhu_v0.env(preset=preset, auction="fixed")
        table = env.unwrapped.game.table
        T = len(table)
        checked = 0
        for game in range(6):
            env.reset(seed=game)
            while not any(env.terminations.values()):
                ids = env.unwrapped.legal_actions()
                s = env.unwrapped.state_vec
                if env.infos[env.agent_selection].get("phase") == "play":
                    seat = env.possible_agents.index(env.agent_selection)
                    hand = s[hand_off(seat):hand_off(seat) + 16]
                    prev = int(s[LAST_ROW])
                    want = reference(hand, None if prev < 0 else table.plays[prev].counts)
                    got = {table.plays[a].counts for a in ids if a < T}
                    assert got == want
                    assert (T in ids) == (prev >= 0)
                    checked += 1
                plays = ids[ids < T]
                a = int(rng.choice(plays)) if len(plays) and rng.random() < 0.8 else int(
                    rng.choice(ids))
                env.step(a)
        print(f"\n{preset}: {checked} env decisions checked")
        assert checked > 100
