"""The rule-based agent: a heuristic player written from the rules pages.

It is two layers:

* the **common play policy** (:class:`RulesAgent`), which works for every climbing game from
  the play table and the family codes: it splits the hand into the fewest combinations
  (:mod:`agents.planner`), goes out at once when it can, leads weak combinations first (chains
  and trios with kickers before singles and pairs, controls last, sure winners first when only
  one weak combination is left), does not lead singles (pairs) into an opponent holding one
  (two) cards, leads low singles (pairs) to a partner holding one (two) cards, never beats a
  partner's play unless it goes out, beats an opponent's play when the beat fits the plan (or
  breaks it a little when an opponent is close to going out), and bombs only to stop an
  opponent who is about to go out or when the bomb leaves a hand it can finish;
* a **game part** (:class:`GamePart` subclasses, one per game, registered in :data:`PARTS`)
  that knows the game's roles and its non-play decisions: bidding or digging by hand strength,
  burying, declaring.  A new game adds a part: the observation field naming the solo role (or
  none), how hand sizes are scaled, and its own phases.

Everything is read from the observation vector through ``game.layout`` (no peeking at the
state), so the agent also runs on the batched engine.  The agent is deterministic.

Strength thresholds for bidding are quantiles of the strength of random hands of the game,
computed once per game with a fixed seed (so a bid of 1 means "better than about 55% of the
hands", 2 "better than 75%", 3 "better than 90%").
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from cardenvs.core.combos import (
    AIRPLANE, AIRPLANE_PAIRS, AIRPLANE_SINGLES, PAIR, SINGLE, TRIO, TRIO_PAIR, TRIO_SINGLE,
)
from cardenvs.core.kernels import gen_legal

from .base import Agent, ObsReader, legal_ids, obs_vector
from .planner import MAX_COMBOS, NODE_BUDGET, plan_combos, plan_cost, plan_costs_after, plan_rules

#: quantiles of random-hand strength at which the agent bids 1, 2, 3
BID_QUANTILES = (0.55, 0.75, 0.90)


@lru_cache(maxsize=None)
def _table_info(table):
    """Per-table lookups: planner rules and (family, body) -> rows of that family and body."""
    by_body: dict = {}
    for i, p in enumerate(table.plays):
        by_body.setdefault((p.family, p.body), []).append(i)
    return plan_rules(table), by_body


class PlayView:
    """The play-phase situation of the seat to move, in relative seats (0 = itself)."""

    __slots__ = ("hand", "others", "sizes", "beat_seat", "beat_family", "beat_cards",
                 "partners", "enemies")

    def __init__(self, hand, others, sizes, beat_seat, beat_family, beat_cards, partners, enemies):
        self.hand = hand
        self.others = others
        self.sizes = sizes
        self.beat_seat = beat_seat
        self.beat_family = beat_family
        self.beat_cards = beat_cards
        self.partners = partners
        self.enemies = enemies


class GamePart:
    """The game-specific part of the rules agent (subclass per game; see :data:`PARTS`).

    Attributes:
        solo_field: observation field holding the one-hot relative seat of the solo role
            (landlord, digger ...) with a last "not decided" slot; ``None`` when every player
            is for himself.
        size_norm: the divisor of the ``hand_sizes`` observation field.
    """

    solo_field: Optional[str] = None
    size_norm: int = 20

    def __init__(self, game, reader: ObsReader):
        self.game = game
        self.reader = reader
        self.n = game.n_players

    # -- teams -----------------------------------------------------------------------------------
    def teams(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(partners, enemies) as boolean arrays over relative seats (seat 0 is neither)."""
        n = self.n
        partners = np.zeros(n, np.bool_)
        enemies = np.ones(n, np.bool_)
        enemies[0] = False
        if self.solo_field is None:
            return partners, enemies
        solo = self.reader.one_hot(obs, self.solo_field)
        if solo < 0 or solo >= n:
            return partners, enemies
        if solo != 0:
            partners[:] = True
            partners[0] = False
            partners[solo] = False
            enemies[:] = False
            enemies[solo] = True
        return partners, enemies

    # -- the situation -----------------------------------------------------------------------------
    def hand(self, obs: np.ndarray) -> np.ndarray:
        return self.reader.cards(obs, "hand")

    def view(self, obs: np.ndarray) -> PlayView:
        r = self.reader
        sizes = np.rint(r.field(obs, "hand_sizes") * self.size_norm).astype(np.int64)
        beat_seat = r.one_hot(obs, "to_beat_seat")
        partners, enemies = self.teams(obs)
        return PlayView(self.hand(obs), r.cards(obs, "others"), sizes, beat_seat,
                        r.one_hot(obs, "to_beat_type"), r.cards(obs, "to_beat"), partners,
                        enemies)

    # -- decisions outside the card play ------------------------------------------------------------
    def decide(self, agent: "RulesAgent", obs: np.ndarray, legal: np.ndarray) -> Optional[int]:
        """An action for a decision the play policy does not cover, or ``None`` to let the
        play policy choose among the legal plays and pass."""
        return None

    # -- helpers for parts -------------------------------------------------------------------------
    def strength(self, agent: "RulesAgent", hand: np.ndarray) -> float:
        """Hand strength for bidding: controls and bombs, minus the turns the plan needs."""
        return agent.strength(hand)

    def bid_levels(self, agent: "RulesAgent") -> np.ndarray:
        """Strength thresholds of bids 1, 2, 3 (quantiles of random dealt hands)."""
        return agent.bid_thresholds(self.dealt_size())

    def dealt_size(self) -> int:
        return getattr(self.game, "hand_cards", 17)

    def bid(self, agent: "RulesAgent", obs: np.ndarray, legal: np.ndarray) -> int:
        """Bid the highest level the hand's strength reaches, if it is legal; else pass."""
        hand = self.hand(obs)
        s = self.strength(agent, hand)
        level = int(np.searchsorted(self.bid_levels(agent), s, side="right"))
        pass_id = self.game.pass_id
        for b in range(level, 0, -1):
            if pass_id + b in legal:
                return pass_id + b
        return pass_id if pass_id in legal else int(legal[0])


class RulesAgent(Agent):
    """Heuristic player for every game with a registered :class:`GamePart` (see module doc)."""

    name = "rules"

    def __init__(self, game, seed: Optional[int] = None):
        super().__init__(game, seed)
        self.reader = ObsReader(game)
        self.part = PARTS[game.info.name](game, self.reader)
        self.table = game.table
        self.tab = game.tab
        self.T = game.pass_id
        self.pr, self._by_body = _table_info(game.table)
        self._buf = np.empty(len(game.table) + 1, np.int64)
        self._oc = np.zeros((MAX_COMBOS, 16), np.int64)
        self._om = np.zeros((MAX_COMBOS, 4), np.int64)
        self._cost_cache: dict = {}
        # two-deck hands have many more chain splits: a smaller search budget keeps a
        # decision fast (the plan's cost moves by a few hundredths)
        self.budget = NODE_BUDGET if game.deck.size <= 60 else 150

    @classmethod
    def unsupported(cls, game) -> Optional[str]:
        if game.info.name not in PARTS:
            return (f"no rules part for {game.info.name!r} yet (known: {', '.join(sorted(PARTS))}); "
                    f"add a GamePart to agents.rules.PARTS")
        return None

    # -- planning helpers ----------------------------------------------------------------------------
    def cost(self, hand: np.ndarray) -> float:
        key = hand.tobytes()
        c = self._cost_cache.get(key)
        if c is None:
            if len(self._cost_cache) > 50_000:
                self._cost_cache.clear()
            c = float(plan_cost(hand, self.pr, self.budget))
            self._cost_cache[key] = c
        return c

    def costs_after(self, hand: np.ndarray, rows: np.ndarray) -> np.ndarray:
        out = np.empty(len(rows), np.float64)
        plan_costs_after(hand, np.ascontiguousarray(rows, np.int64), self.tab.counts, self.pr,
                         self.budget, out)
        return out

    def strength(self, hand: np.ndarray) -> float:
        """Controls (ranks above every chain) and bombs, minus the plan's turns."""
        ctrl = int(self.pr.flags[1])
        R = self.game.deck.n_ranks
        s = 0.0
        for r in range(ctrl, R):
            # higher controls are worth more: the top rank 2, the next 1.5, then 1
            w = 1.0 + 0.5 * min(2, r - ctrl)
            s += w * hand[r]
        for r in range(R):
            for k in range(int(hand[r]), 3, -1):
                if self.pr.bomb_ok[r, k]:
                    s += 2.0 + 0.5 * (k - 4)
                    break
        if self.pr.flags[6] and np.all(hand >= self.pr.rocket):
            s += 2.0
        return s - 0.5 * self.cost(hand)

    def bid_thresholds(self, dealt: int) -> np.ndarray:
        key = ("bid", dealt)
        th = self._cost_cache.get(key)
        if th is None:
            th = _strength_quantiles(self, dealt)
            self._cost_cache[key] = th
        return th

    def sure_winner(self, row: int, others: np.ndarray) -> bool:
        """Whether no combination of the unseen cards can beat ``row``."""
        return gen_legal(others, row, self.tab, self._buf) == 0

    # -- acting --------------------------------------------------------------------------------------
    def act(self, observation, legal=None, info=None) -> int:
        legal = legal_ids(observation, legal)
        if len(legal) == 1:
            return int(legal[0])
        obs = obs_vector(observation)
        a = self.part.decide(self, obs, legal)
        if a is not None:
            return int(a)
        plays = legal[legal <= self.T]
        if plays.size == 0:
            raise ValueError(f"the {self.game.info.name} rules part left a decision without card "
                             f"plays to the play policy: legal {legal[:8].tolist()}")
        return self.play(self.part.view(obs), plays)

    def play(self, v: PlayView, legal: np.ndarray) -> int:
        """The common play policy over ``legal`` (play rows and possibly pass)."""
        T = self.T
        rows = legal[legal < T]
        can_pass = bool((legal == T).any())
        if rows.size == 0:
            return T
        hand = v.hand
        total = int(hand.sum())
        tab = self.tab
        out_rows = rows[tab.ncards[rows] == total]
        if out_rows.size:  # go out now (a doubling play if there is one)
            return int(out_rows[np.argmax(tab.doubles[out_rows])])
        if v.beat_seat <= 0 or not can_pass:
            return self._lead(v, rows)
        return self._follow(v, rows, T)

    # -- leading -------------------------------------------------------------------------------------
    def _plan(self, hand):
        cost, n = plan_combos(hand, self.pr, self.budget, self._oc, self._om)
        return cost, [(int(self._om[i, 0]), int(self._om[i, 1]), self._oc[i].copy())
                      for i in range(n)]

    def _combo_rows(self, fam: int, counts: np.ndarray, legal_set: set) -> list[int]:
        """Legal rows for a planned combination: the exact cards, else the same body with
        other kickers, else the body alone."""
        rows = [r for r in self.table.rows_of_cards(counts)
                if self.table.plays[r].family == fam and r in legal_set]
        if rows:
            return rows
        if fam in (TRIO_SINGLE, TRIO_PAIR, AIRPLANE_SINGLES, AIRPLANE_PAIRS):
            body = tuple(int(c) if c >= 3 else 0 for c in counts)
            if fam in (TRIO_SINGLE, TRIO_PAIR):
                k = int(np.argmax(np.array(body) >= 3))
                body = tuple(3 if i == k else 0 for i in range(16))
            rows = [r for r in self._by_body.get((fam, body), []) if r in legal_set]
            if rows:
                return rows
            bare = TRIO if fam in (TRIO_SINGLE, TRIO_PAIR) else AIRPLANE
            return [r for r in self._by_body.get((bare, body), []) if r in legal_set]
        return []

    def _lead(self, v: PlayView, rows: np.ndarray) -> int:
        tab = self.tab
        hand = v.hand
        legal_set = set(rows.tolist())
        _, combos = self._plan(hand)
        R = self.game.deck.n_ranks
        ctrl = int(self.pr.flags[1])
        options = []  # (priority, rows, is_bomb, sure, family)
        for fam, key, counts in combos:
            cand = self._combo_rows(fam, counts, legal_set)
            if not cand:
                continue
            if len(cand) > 1:
                costs = self.costs_after(hand, np.array(cand, np.int64))
                cand = [cand[int(np.argmin(costs))]]
            row = cand[0]
            bomb = bool(tab.power[row] > 0)
            low = int(np.flatnonzero(tab.counts[row])[0])
            n = int(tab.ncards[row])
            control = key >= ctrl and fam in (SINGLE, PAIR, TRIO, TRIO_SINGLE, TRIO_PAIR)
            prio = low / R - 0.03 * n + (1.0 if control else 0.0) + (2.0 if bomb else 0.0)
            options.append([prio, row, bomb, self.sure_winner(row, v.others), fam, n])
        if not options:  # the plan's combinations are not plays here: the cheapest legal lead
            costs = self.costs_after(hand, rows)
            return int(rows[int(np.argmin(costs))])
        enemy_min = int(v.sizes[v.enemies].min()) if v.enemies.any() else 99
        weak = [o for o in options if not o[3]]
        sure = [o for o in options if o[3]]
        # one weak combination left (or none): cash the sure winners first, biggest first
        if len(weak) <= 1 and sure:
            nonbomb = [o for o in sure if not o[2]] or sure
            return int(max(nonbomb, key=lambda o: (o[5], -o[0]))[1])
        # help a partner who holds one or two cards: lead my lowest single / pair
        if v.partners.any():
            pmin = int(v.sizes[v.partners].min())
            if pmin in (1, 2) and enemy_min > 2:
                fam = SINGLE if pmin == 1 else PAIR
                low = self._lowest_row(rows, fam)
                if low is not None:
                    return low
        # do not feed an opponent about to go out
        def bad(o):
            return (enemy_min == 1 and o[5] == 1) or (enemy_min == 2 and o[4] == PAIR)
        good = [o for o in options if not o[2] and not bad(o)]
        if good:
            return int(min(good, key=lambda o: o[0])[1])
        nonbomb = [o for o in options if not o[2]]
        if nonbomb:
            if enemy_min == 1:  # only singles: the highest one
                singles = [o for o in nonbomb if o[4] == SINGLE]
                if len(singles) == len(nonbomb):
                    return int(max(singles, key=lambda o: tab.key[o[1]])[1])
                return int(min((o for o in nonbomb if o[5] > 1), key=lambda o: o[0])[1])
            return int(min(nonbomb, key=lambda o: o[0])[1])
        return int(min(options, key=lambda o: tab.power[o[1]])[1])

    def _lowest_row(self, rows: np.ndarray, fam: int) -> Optional[int]:
        tab = self.tab
        sel = rows[tab.family[rows] == fam]
        if sel.size == 0:
            return None
        return int(sel[np.argmin(tab.key[sel])])

    # -- following -----------------------------------------------------------------------------------
    def _follow(self, v: PlayView, rows: np.ndarray, pass_id: int) -> int:
        if v.partners[v.beat_seat]:
            return pass_id  # never beat a partner's play (going out was handled before)
        tab = self.tab
        hand = v.hand
        now = self.cost(hand)
        costs = self.costs_after(hand, rows)
        delta = costs - now
        bomb = tab.power[rows] > 0
        enemy_min = int(v.sizes[v.enemies].min()) if v.enemies.any() else 99
        beater_left = int(v.sizes[v.beat_seat])
        if enemy_min <= 2 or beater_left <= 3:
            thr = 2.5
        elif enemy_min <= 5:
            thr = 0.6
        else:
            thr = -0.4
        plain = ~bomb & (delta <= thr + 1e-9)
        if plain.any():
            idx = np.flatnonzero(plain)
            best = idx[np.lexsort((tab.key[rows[idx]], delta[idx]))[0]]
            return int(rows[best])
        if bomb.any():
            idx = np.flatnonzero(bomb)
            finish = costs[idx] <= 1.6  # the bomb leaves a hand it can nearly finish
            if enemy_min <= 3 or beater_left <= 4 or finish.any():
                best = idx[np.argmin(tab.power[rows[idx]])]
                return int(rows[best])
        return pass_id


def _strength_quantiles(agent: RulesAgent, dealt: int, n_hands: int = 400) -> np.ndarray:
    """Strength at :data:`BID_QUANTILES` over random hands of ``dealt`` cards (seed 0)."""
    deck = agent.game.deck
    cards = np.repeat(np.arange(deck.n_ranks), deck.copies)
    rng = np.random.default_rng(0)
    s = np.empty(n_hands)
    for i in range(n_hands):
        h = np.bincount(rng.choice(cards, dealt, replace=False), minlength=16).astype(np.int64)
        s[i] = agent.strength(h)
    return np.quantile(s, BID_QUANTILES)


# -- game parts ----------------------------------------------------------------------------------------


class DouDizhuPart(GamePart):
    """斗地主, 3 and 4 players: bid by hand strength; the landlord plays alone."""

    solo_field = "landlord"

    def __init__(self, game, reader):
        super().__init__(game, reader)
        self.size_norm = game.max_hand

    def decide(self, agent, obs, legal):
        bid0, bid1 = self.game.blocks["bid"]
        if ((legal >= bid0) & (legal < bid1)).any():
            return self.bid(agent, obs, legal)
        return None


class WakengPart(GamePart):
    """挖坑: bid by strength, bury the cards that leave the best plan (keeping diamonds when
    another card of the rank will do), play open only with a hand that is nearly finished."""

    solo_field = "digger"
    size_norm = 20

    def dealt_size(self) -> int:
        return 16

    def decide(self, agent, obs, legal):
        g = self.game
        b = g.blocks
        if ((legal >= b["bid"][0]) & (legal < b["bid"][1])).any():
            return self.bid(agent, obs, legal)
        if ((legal >= b["bury"][0]) & (legal < b["bury"][1])).any():
            return self._bury(agent, obs, legal)
        if ((legal >= b["open"][0]) & (legal < b["open"][1])).any():
            hand = self.hand(obs)
            sure = self.strength(agent, hand) >= self.bid_levels(agent)[-1] + 2.0
            return b["open"][0] + (1 if sure else 0)
        return None

    def _bury(self, agent, obs, legal):
        g = self.game
        b0, b1 = g.blocks["bury"]
        nr = g.deck.n_ranks
        hand = self.hand(obs)
        best = None
        for a in legal:
            if not b0 <= a < b1:
                continue
            k = int(a - b0)
            r = k % nr
            diamond = k >= nr
            h = hand.copy()
            h[r] -= 1
            # keep the strongest hand (controls count, so they are kept); then bury low ranks,
            # and a card other than the diamond (the diamonds decide who leads)
            key = (-agent.strength(h) + 0.02 * r / nr, diamond, r)
            if best is None or key < best[0]:
                best = (key, int(a))
        return best[1]


#: game name -> its part of the rules agent
PARTS: dict[str, type] = {
    "doudizhu": DouDizhuPart,
    "doudizhu4": DouDizhuPart,
    "wakeng": WakengPart,
}


def register_part(game_name: str, part: type) -> None:
    """Register the rules agent's part for a game (used by new games' modules)."""
    if not (isinstance(part, type) and issubclass(part, GamePart)):
        raise TypeError("part must be a GamePart subclass")
    PARTS[game_name] = part
