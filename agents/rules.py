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
  opponent who is about to go out or when the bomb leaves a hand it can finish; it never
  makes a play that leaves a hand able to make no play at all (a lone joker, only 3s) while
  anything else is legal;
* a **game part** (:class:`GamePart` subclasses, one per game, registered in :data:`PARTS`)
  that knows the game's roles and its non-play decisions: bidding or digging by hand strength,
  burying, exchanging, declaring, which jokers stand in.  A new game adds a part: the
  observation field naming the solo role (or none), how hand sizes are scaled, its wild jokers
  (the planner then tries them as stand-ins: :func:`agents.planner.plan_cost_wild`) and its
  own phases.

Everything is read from the observation vector through ``game.layout`` (no peeking at the
state), so the agent also runs on the batched engine.  The agent is deterministic.

Strength thresholds for bidding are quantiles of the strength of random hands of the game,
computed once per game with a fixed seed (so a bid of 1 means "better than about 55% of the
hands", 2 "better than 75%", 3 "better than 90%"); Wakeng bids instead by an estimate of
its chance to win as the digger, calibrated by play-outs (:class:`WakengPart`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from cardenvs.core.combos import (
    AIRPLANE, AIRPLANE_PAIRS, AIRPLANE_SINGLES, PAIR, SINGLE, TRIO, TRIO_PAIR, TRIO_SINGLE,
)
from cardenvs.core.kernels import gen_legal
from cardenvs.core.wild import gen_legal_wild
from cardenvs.registry import REGISTRY

from .base import Agent, ObsReader, as_game, legal_ids, obs_vector
from .planner import (
    MAX_COMBOS, NODE_BUDGET, plan_combos, plan_combos_wild, plan_cost, plan_cost_wild,
    plan_costs_after, plan_costs_after_wild, plan_rules,
)

#: quantiles of random-hand strength at which the agent bids 1, 2, 3
BID_QUANTILES = (0.55, 0.75, 0.90)


@lru_cache(maxsize=None)
def _table_info(table, effective: bool = False):
    """Per-table lookups: planner rules and (family, body) -> rows of that family and body."""
    by_body: dict = {}
    for i, p in enumerate(table.plays):
        by_body.setdefault((p.family, p.body), []).append(i)
    return plan_rules(table, effective), by_body


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
    #: the solo role's opponents are a *loose* alliance (each also scored by his own place):
    #: a partner's play may be overtaken when that costs the plan nothing (Da Niangniang)
    loose_alliance: bool = False
    #: a loose ally's play is overtaken only while every enemy holds more than this many
    #: cards, and only by a non-bomb, non-control play that lowers the plan cost by at least
    #: ``-ally_delta``
    ally_enemy_min: int = 4
    ally_delta: float = -0.6
    #: rank slots of the wild jokers (empty: no wild cards) and how many natural ranks the
    #: deck has (a joker stands in only for those); see :func:`agents.planner.plan_cost_wild`
    wild_slots: tuple = ()
    natural_ranks: int = 0
    #: at most this many jokers are tried as stand-ins when valuing a hand
    max_wild: int = 2
    #: 0: a joker may join any combination; k > 0: only ranks held k or more times (jokers
    #: only in bombs)
    wild_min: int = 0
    #: plan cost of a hand that can make no play at all (a lone joker in Da Niangniang, only 3s
    #: in Lanxi Wulong): above every real plan, so plays leaving such a hand are made only
    #: when nothing else is legal (-1: no special case)
    lone_cost: float = -1.0

    def __init__(self, game, reader: ObsReader):
        self.game = game
        self.reader = reader
        self.n = game.n_players

    def wild_rows(self):
        """The game's :class:`cardenvs.core.wild.WildRows` (``None`` without wild cards)."""
        return None

    def plan_view(self, pr):
        """The planner's view of the play table (:func:`agents.planner.plan_rules`), amended
        where the table alone misleads it (default: as it is)."""
        return pr

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

    def removed_ranks(self, ids: np.ndarray) -> np.ndarray:
        """Per action id, the rank slot of the one card it takes out of the hand without
        playing it (burying, returning), or -1 (default: -1 for every id).  The context
        ``"plan_picks"`` (:mod:`agents.context`) values such picks by the hand they leave."""
        return np.full(len(ids), -1, np.int64)

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
        game = as_game(game)
        super().__init__(game, seed)
        self.reader = ObsReader(game)
        self.part = PARTS[game.info.name](game, self.reader)
        self.table = game.table
        self.tab = game.tab
        self.T = game.pass_id
        self.wild = np.array(self.part.wild_slots, np.int64)
        self.nat = int(self.part.natural_ranks)
        self.wcfg = np.array([self.part.natural_ranks, self.part.max_wild, self.part.wild_min],
                             np.int64)
        self.lone = float(self.part.lone_cost)
        self.wr = self.part.wild_rows() if self.wild.size else None
        self.pr, self._by_body = _table_info(game.table, bool(self.wild.size))
        self.pr = self.part.plan_view(self.pr)
        self._buf = np.empty(len(game.table) + 1, np.int64)
        self._oc = np.zeros((MAX_COMBOS, 16), np.int64)
        self._om = np.zeros((MAX_COMBOS, 4), np.int64)
        self._cost_cache: dict = {}
        self._bid_cache: dict = {}  # apart from the cost cache, which is cleared when full
        # two-deck hands have many more chain splits: a smaller search budget keeps a
        # decision fast (the plan's cost moves by a few hundredths)
        self.budget = NODE_BUDGET if game.deck.size <= 60 else 150

    @classmethod
    def unsupported(cls, game) -> Optional[str]:
        game = as_game(game)
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
            if self.wild.size:
                c = float(plan_cost_wild(hand, self.pr, self.budget, self.wild, self.wcfg,
                                         self.lone))
            else:
                c = float(plan_cost(hand, self.pr, self.budget))
            self._cost_cache[key] = c
        return c

    def costs_after(self, hand: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Plan cost of the hand left after each row (-100 when the row empties the hand);
        in a wild-joker game the row's missing cards are jokers (see
        :func:`agents.planner.plan_costs_after_wild`)."""
        out = np.empty(len(rows), np.float64)
        rows = np.ascontiguousarray(rows, np.int64)
        if self.wild.size:
            plan_costs_after_wild(hand, rows, self.tab.counts, self.pr, self.budget, self.wild,
                                  self.wcfg, self.lone, out)
        else:
            plan_costs_after(hand, rows, self.tab.counts, self.pr, self.budget, out)
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
        th = self._bid_cache.get(dealt)
        if th is None:
            th = self._bid_cache[dealt] = _strength_quantiles(self, dealt)
        return th

    def sure_winner(self, row: int, others: np.ndarray) -> bool:
        """Whether no combination of the unseen cards can beat ``row``."""
        if self.wr is not None:
            return gen_legal_wild(others, row, self.tab, self.wr, self._buf) == 0
        return gen_legal(others, row, self.tab, self._buf) == 0

    def top_of_type(self, row: int, others: np.ndarray) -> bool:
        """Whether no play of the same type from the unseen cards beats ``row`` (bombs not
        counted, unless ``row`` is itself a bomb)."""
        tab = self.tab
        if self.wr is not None:
            k = gen_legal_wild(others, row, tab, self.wr, self._buf)
        else:
            k = gen_legal(others, row, tab, self._buf)
        if k == 0:
            return True
        if tab.power[row] > 0:
            return False
        return not bool((tab.power[self._buf[:k]] == 0).any())

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
        if self.wild.size:
            cost, n = plan_combos_wild(hand, self.pr, self.budget, self.wild, self.wcfg,
                                       self.lone, self._oc, self._om)
        else:
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
        if options and self.lone >= 0:
            # never a lead that leaves a hand that can make no play (a lone joker, only 3s)
            after = self.costs_after(hand, np.array([o[1] for o in options], np.int64))
            options = [o for o, c in zip(options, after) if c < self.lone - 1e-9]
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
        tab = self.tab
        hand = v.hand
        enemy_min = int(v.sizes[v.enemies].min()) if v.enemies.any() else 99
        ally = bool(v.partners[v.beat_seat])
        # never beat a partner's play (going out was handled before); a loose ally's only
        # with a cheap play while the common enemy is far from going out
        if ally and not (self.part.loose_alliance and enemy_min > self.part.ally_enemy_min):
            return pass_id
        now = self.cost(hand)
        costs = self.costs_after(hand, rows)
        delta = costs - now
        bomb = tab.power[rows] > 0
        if ally:
            ctrl = int(self.pr.flags[1])
            cheap = ~bomb & (delta <= self.part.ally_delta) & (tab.key[rows] < ctrl)
            if self.wild.size:
                cheap &= self._deficits(hand, rows) == 0
            if not cheap.any():
                return pass_id
            idx = np.flatnonzero(cheap)
            return int(rows[idx[np.lexsort((tab.key[rows[idx]], delta[idx]))[0]]])
        beater_left = int(v.sizes[v.beat_seat])
        if beater_left == 0:  # the play to beat went out with it: no threat from that seat
            beater_left = 99
        if enemy_min <= 2 or beater_left <= 3:
            thr = 2.5
        elif enemy_min <= 5:
            thr = 0.6
        else:
            thr = -0.4
        if self.lone >= 0:  # never a play that leaves no playable card (pass instead)
            alive = costs < self.lone - 1e-9
            bomb &= alive
        else:
            alive = np.ones(len(rows), np.bool_)
        plain = ~bomb & alive & (delta <= thr + 1e-9)
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

    def _deficits(self, hand: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Jokers each row takes from the hand: stand-ins for missing cards, jokers as
        themselves (zeros in a game without wild cards)."""
        if not self.wild.size:
            return np.zeros(len(rows), np.int64)
        nat = self.nat
        c = self.tab.counts[rows]
        need = np.maximum(c[:, :nat] - hand[:nat], 0).sum(1)
        return need + c[:, self.wild].sum(1)


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
    """挖坑: bid by the estimated chance of winning as the digger, bury the cards that leave
    the best plan (keeping diamonds when another card of the rank will do), play open only
    with a hand that is nearly finished.

    *Bidding.*  The chance that the agent wins a deal as the digger is estimated from the
    strength of its 16 dealt cards (:meth:`RulesAgent.strength`) by a logistic fit
    (:attr:`DIG_LOGIT`) to 9,000 play-outs: 3,000 deals, each played out by the agent at every
    seat with each seat in turn forced to dig (``python -m benchmarks.wakeng_bidding``).  The
    digger won 77% of them: 52% with the weakest 5% of hands (strength below -3), 89% with
    the strongest 9% (above 2).  Because the score is proportional to the bid and the auction
    has one round, replaying every auction from these play-outs showed that the bids 1 and 2
    never pay: the best bidding bids 3 as soon as the estimated chance reaches a threshold
    and passes below it (:attr:`BID_WIN_P`, the chance each bid level needs).  With the
    threshold at 0.6 the agent digs with about 95% of hands; it scored within 0.4 per deal
    of the best policy tried against every bidding tried (digging always, at 0.5, 0.7 and
    0.75, and the former quantile bidding, which dug far too rarely: at the 90% quantile of
    strength for a 3; +33 per deal in the replayed duplicate comparison), in play-outs
    against the ``rules`` farmers and against the shipped ``trained`` farmers alike.  In the
    arena (1,000 duplicate deals, seed 0) the new bidding beat the old one by +22.6
    [+21.3, +23.8] per deal.
    """

    solo_field = "digger"
    size_norm = 20
    #: the digger's chance of winning as ``sigmoid(a + b * strength)`` (fit to rules-agent
    #: play-outs, see the class docstring)
    DIG_LOGIT = (1.34, 0.309)
    #: the estimated chance of winning as the digger that bids 1, 2 and 3 need
    BID_WIN_P = (0.6, 0.6, 0.6)

    def dealt_size(self) -> int:
        return 16

    def win_probability(self, agent, hand: np.ndarray) -> float:
        """Estimated chance of winning the deal as the digger with the dealt ``hand``."""
        a, b = self.DIG_LOGIT
        return float(1.0 / (1.0 + np.exp(-(a + b * self.strength(agent, hand)))))

    def bid_levels(self, agent) -> np.ndarray:
        """Strength thresholds of bids 1, 2, 3: where the estimated win chance reaches
        :attr:`BID_WIN_P`."""
        a, b = self.DIG_LOGIT
        p = np.asarray(self.BID_WIN_P, np.float64)
        return (np.log(p / (1.0 - p)) - a) / b

    def decide(self, agent, obs, legal):
        g = self.game
        b = g.blocks
        if ((legal >= b["bid"][0]) & (legal < b["bid"][1])).any():
            return self.bid(agent, obs, legal)
        if ((legal >= b["bury"][0]) & (legal < b["bury"][1])).any():
            return self._bury(agent, obs, legal)
        if ((legal >= b["open"][0]) & (legal < b["open"][1])).any():
            # 明牌 doubles the stake: only with a hand far above the 90% quantile of strength
            hand = self.hand(obs)
            sure = self.strength(agent, hand) >= agent.bid_thresholds(self.dealt_size())[-1] + 2.0
            return b["open"][0] + (1 if sure else 0)
        return None

    def removed_ranks(self, ids: np.ndarray) -> np.ndarray:
        """A bury pick takes one card of rank ``k % ranks`` out of the hand (``k``: its index
        in the ``bury`` block; ``k >= ranks`` names that rank's diamond)."""
        b0, b1 = self.game.blocks["bury"]
        ids = np.asarray(ids, np.int64)
        return np.where((ids >= b0) & (ids < b1), (ids - b0) % self.game.deck.n_ranks, -1)

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


class NiangniangPart(GamePart):
    """打娘娘: jokers are wild (the planner tries them as stand-ins; a hand that would be one
    lone joker is stuck, so the plan pays ``lone_cost`` for it and jokers are spent before the
    last card); the 娘娘 exchanges by hand value against the 活子 penalty; the catchers are a
    loose alliance against the 娘娘: they never overtake each other once the 娘娘 holds
    :attr:`ally_enemy_min` cards or fewer, and before that only with a non-bomb, non-control
    play of natural cards that does not worsen the plan (in self-play, catchers who never
    overtook each other held the 娘娘 lower but scored less each; those who ignored the
    alliance scored more each but let the 娘娘 score more); once the 娘娘 is out or stuck every
    player is for himself.

    *Exchange.*  The value of a hand is minus its plan cost plus a bonus for the cards that
    win tricks beyond their place in the plan (:attr:`TOP_BONUS` for the three top natural
    ranks, :attr:`JOKER_BONUS`: a joker fills any combination).  Each ``take`` picks the bottom card whose
    best 10-card hand is worth most: the hand with the card, less as many returns as it will
    owe, chosen greedily; each ``return`` gives back the original card whose loss costs the
    least value plus :attr:`HUOZI` for a 活子 (3s and 2s are 死子 and cost no point, so a 3 --
    weak -- goes back before a 4 of the same use, while a 2 -- strong -- is kept unless the
    hand has no use for it).  Jokers are never returned (the legal ids enforce it).

    *Joker follow-up.*  Between ``joker as r`` and ``no more jokers`` the option leaving the
    cheapest hand wins (ties keep the joker).  *亮3* (``first_niangniang="reveal_choice"``):
    the real deal is a new shuffle, so the choice is the role alone: :attr:`REVEAL`.
    """

    solo_field = "niangniang"
    size_norm = 14
    loose_alliance = True
    ally_enemy_min = 2
    ally_delta = 0.0
    max_wild = 2
    lone_cost = 100.0
    #: plan turns that one point of 活子 penalty is worth in the exchange (0 .. 1 tried in
    #: self-play: 0.25 .. 0.4 scored best)
    HUOZI = 0.4
    #: exchange bonus per card kept, in plan turns: the planner counts a 2 as a combination
    #: like any other, but the top natural ranks (2, A, K in the standard order) and the
    #: jokers win tricks (tuned in rules-agent self-play: the 娘娘's mean score rose from
    #: about +0.6 without the bonus to about +1.45 with it)
    TOP_BONUS = (1.0, 0.6, 0.2)
    JOKER_BONUS = 0.5
    #: reveal a 3 in the 亮3 draw (become the 娘娘): in rules-agent self-play (1,000 deals) the
    #: 娘娘 averaged about +1.45 a hand (活子 penalty included), a catcher about 0
    REVEAL = True
    #: planes of the effective-play fields (``to_beat``, ``pending``) and of joker stand-ins
    EFF_DEPTH = 6
    JOKER_DEPTH = 2

    def __init__(self, game, reader):
        super().__init__(game, reader)
        order = game.order
        self.wild_slots = tuple(game.joker_slots)
        self.natural_ranks = min(game.joker_slots)
        self.dead = np.zeros(16, np.bool_)
        for c in "32BR":
            self.dead[order.index(c)] = True
        self.bonus = np.zeros(16)
        for i, v in enumerate(self.TOP_BONUS):
            self.bonus[self.natural_ranks - 1 - i] = v
        for j in self.wild_slots:
            self.bonus[j] = self.JOKER_BONUS
        opts = game.options
        if opts["joker_wild_scope"] == "bombs_only":
            self.wild_min = 3
        self.huozi = self.HUOZI * {"always": 1.0, "last": 0.35, "never": 0.0}[opts["huozi_when"]]
        self.bottom_scope = opts["huozi_scope"] == "bottom"

    def wild_rows(self):
        return self.game.wild

    def view(self, obs: np.ndarray) -> PlayView:
        r = self.reader
        n = self.n
        sizes = np.rint(r.field(obs, "hand_sizes") * self.size_norm).astype(np.int64)
        place = r.field(obs, "place").reshape(n, n + 1)
        active = (place[:, 0] > 0.5) & (r.field(obs, "stuck") < 0.5)
        others = active.copy()
        others[0] = False
        nn = r.one_hot(obs, "niangniang")
        enemies = np.zeros(n, np.bool_)
        partners = np.zeros(n, np.bool_)
        if 0 < nn < n and active[nn]:
            enemies[nn] = True
            partners = others & ~enemies
        else:  # I am the 娘娘, or the 娘娘 is out or stuck: every player for himself
            enemies = others
        return PlayView(self.hand(obs), r.cards(obs, "others"), sizes,
                        r.one_hot(obs, "to_beat_seat"), r.one_hot(obs, "to_beat_type"),
                        r.cards(obs, "to_beat", depth=self.EFF_DEPTH), partners, enemies)

    def decide(self, agent, obs, legal):
        b = self.game.blocks

        def offered(name):
            return name in b and bool(((legal >= b[name][0]) & (legal < b[name][1])).any())

        if offered("joker"):
            return self._joker(agent, obs, legal)
        if offered("take"):
            return self._take(agent, obs, legal)
        if offered("return"):
            return self._return(agent, obs, legal)
        if offered("reveal"):
            return b["reveal"][0] + (0 if self.REVEAL else 1)
        return None

    # -- the exchange ------------------------------------------------------------------------------
    def value(self, agent, hand: np.ndarray) -> float:
        """Exchange value of a hand, in plan turns (higher is better)."""
        return -agent.cost(hand) + float(self.bonus @ hand)

    def penalty(self, taken: np.ndarray, returned: np.ndarray) -> float:
        """The 活子 penalty of an exchange, in plan turns."""
        live = ~self.dead
        n = float(returned[live].sum())
        if self.bottom_scope:  # the whole bottom counts: a 活子 taken leaves it
            n -= float(taken[live].sum())
        return self.huozi * n

    def _best_return(self, agent, hand, taken, returned):
        """``(rank, score)`` of the best card to return now (greedy), or ``(-1, score)``."""
        best = None
        for r in range(self.natural_ranks):
            if hand[r] - taken[r] <= 0:
                continue  # only the 娘娘's own dealt cards go back
            h = hand.copy()
            h[r] -= 1
            ret = returned.copy()
            ret[r] += 1
            score = self.value(agent, h) - self.penalty(taken, ret)
            key = (score, self.dead[r], -r)  # ties: a 死子, then the lowest rank
            if best is None or key > best[0]:
                best = (key, r)
        return best

    def _return(self, agent, obs, legal):
        r0, r1 = self.game.blocks["return"]
        hand = self.hand(obs)
        taken = self.reader.cards(obs, "taken")
        returned = self.reader.cards(obs, "returned")
        best = None
        for a in legal:
            if not r0 <= a < r1:
                continue
            r = int(a - r0)
            h = hand.copy()
            h[r] -= 1
            ret = returned.copy()
            ret[r] += 1
            key = (self.value(agent, h) - self.penalty(taken, ret), self.dead[r], -r)
            if best is None or key > best[0]:
                best = (key, int(a))
        return best[1]

    def _take(self, agent, obs, legal):
        t0, t1 = self.game.blocks["take"]
        hand = self.hand(obs)
        taken = self.reader.cards(obs, "taken")
        owed = int(taken.sum()) + 1  # returns the hand will owe after this take
        best = None
        for a in legal:
            if not t0 <= a < t1:
                continue
            c = int(a - t0)
            h = hand.copy()
            h[c] += 1
            t = taken.copy()
            t[c] += 1
            ret = np.zeros(16, np.int64)
            for _ in range(owed):
                pick = self._best_return(agent, h, t, ret)
                if pick is None:
                    break
                h[pick[1]] -= 1
                ret[pick[1]] += 1
            key = (self.value(agent, h) - self.penalty(t, ret), self.bonus[c], c)
            if best is None or key > best[0]:
                best = (key, int(a))
        return best[1]

    # -- the joker follow-up -----------------------------------------------------------------------
    def _joker(self, agent, obs, legal):
        j0 = self.game.blocks["joker"][0]
        nat = self.natural_ranks
        r = self.reader
        hand = self.hand(obs)
        pend = r.cards(obs, "pending", depth=self.EFF_DEPTH)
        stood = r.cards(obs, "pending_jokers", depth=self.JOKER_DEPTH, n_ranks=nat)
        best = None
        for a in legal:
            k = int(a - j0)
            s = stood.copy()
            if k < nat:
                s[k] += 1
            rest = hand.copy()
            rest[:nat] -= pend[:nat] - s[:nat]
            jokers = int(s[:nat].sum())
            for j in self.wild_slots:  # B stands in first (the game's canonical choice)
                use = min(jokers, int(rest[j]))
                rest[j] -= use
                jokers -= use
            cost = -100.0 if rest.sum() == 0 else agent.cost(rest)
            key = (cost, k < nat, k)  # ties: keep the joker
            if best is None or key < best[0]:
                best = (key, int(a))
        return best[1]


class WulongPart(GamePart):
    """兰溪乌龙: every player for himself; jokers are wild and also strong cards of their own
    (``R`` > ``B`` > 2 as singles), 3s only inside chains, 报牌 declaring.

    *Planning.*  The planner's table knows 3s only in chains, so a 3 no chain takes costs
    three turns (:data:`agents.planner.STUCK_COST`) and the chains that take the 3s are led
    first (lowest first); a hand of only 3s has failed (the player pays), so a play that leaves
    only 3s costs ``lone_cost`` and is made only when nothing else is possible.  Up to two
    jokers are tried as stand-ins when valuing a hand (the small jokers first: the big one is
    the top single); a hand with more keeps the rest as themselves.

    *Joker picks.*  Each ``B[r]`` / ``R[r]`` / ``done`` option is valued by the hand it leaves
    (further forced stand-ins taken from the small jokers first); ties keep the big joker, then
    keep jokers.

    *报牌.*  Declared on a lead when the plan takes every card in at most
    :attr:`DECLARE_MAX` combinations of which at most :attr:`DECLARE_WEAK` could be beaten by
    the cards not seen (their bombs and wild jokers included, as if one player held them all):
    the sure winners are cashed first and the last combination goes out.  Every play then
    holds the top card (the legal ids enforce it).  In rules-agent self-play (1,000 deals) the
    agent declared in about 15% of the deals and went out first every time, +0.15 a deal over
    never declaring; counting only plays of the same type (ignoring bombs) declared a little
    more often but lost some.
    """

    size_norm = 25
    max_wild = 2
    lone_cost = 100.0
    DECLARE_MAX = 3
    DECLARE_WEAK = 1
    #: count the unseen cards' bombs when testing whether a combination can be beaten
    DECLARE_BOMBS = True

    def __init__(self, game, reader):
        super().__init__(game, reader)
        self.wild_slots = tuple(game.wild_slots)
        self.natural_ranks = min(game.joker_slots)
        self.kinds = getattr(game, "pick_kinds", "")

    def wild_rows(self):
        return self.game.wr

    def view(self, obs: np.ndarray) -> PlayView:
        r = self.reader
        n = self.n
        sizes = np.rint(r.field(obs, "hand_sizes") * self.size_norm).astype(np.int64)
        status = r.field(obs, "status").reshape(n, 3)
        enemies = status[:, 0] > 0.5
        enemies[0] = False
        return PlayView(self.hand(obs), r.cards(obs, "others"), sizes,
                        r.one_hot(obs, "to_beat_seat"), r.one_hot(obs, "to_beat_type"),
                        r.cards(obs, "to_beat"), np.zeros(n, np.bool_), enemies)

    def decide(self, agent, obs, legal):
        b = self.game.blocks
        if "pick" in b and bool(((legal >= b["pick"][0]) & (legal < b["pick"][1])).any()):
            return self._pick(agent, obs, legal)
        d = b["declare"][0]
        if d in legal:
            if self.should_declare(agent, obs):
                return d
            rest = legal[legal != d]
            if rest.size == 1:
                return int(rest[0])
        return None

    # -- 报牌 ---------------------------------------------------------------------------------------
    def should_declare(self, agent, obs) -> bool:
        v = self.view(obs)
        if v.beat_seat > 0:
            return False  # declare on a lead only
        _, combos = agent._plan(v.hand)
        if not combos or len(combos) > self.DECLARE_MAX:
            return False
        if sum(int(c.sum()) for _f, _k, c in combos) != int(v.hand.sum()):
            return False  # a card no combination takes (a 3 outside every chain)
        weak = 0
        for fam, _key, counts in combos:
            rows = [t for t in agent.table.rows_of_cards(counts) if agent.table.plays[t].family == fam]
            if not rows:
                weak += 1
            elif self.DECLARE_BOMBS and not agent.sure_winner(rows[0], v.others):
                weak += 1
            elif not agent.top_of_type(rows[0], v.others):
                weak += 1
        return weak <= self.DECLARE_WEAK

    # -- joker picks -------------------------------------------------------------------------------
    def _pick(self, agent, obs, legal):
        p0 = self.game.blocks["pick"][0]
        nat = self.natural_ranks
        r = self.reader
        hand = self.hand(obs)
        pend = r.cards(obs, "pending")
        pw = r.field(obs, "pending_wilds").reshape(nat, 4) > 0.5
        kb = (pw[:, 0].astype(np.int64) + pw[:, 1])
        kr = (pw[:, 2].astype(np.int64) + pw[:, 3])
        jb, jr = (13, 14)
        best = None
        for a in legal:
            i = int(a - p0)
            b2, r2 = kb.copy(), kr.copy()
            done = i == nat * len(self.kinds)
            if not done:
                kind, rank = self.kinds[i // nat], i % nat
                (b2 if kind == "B" else r2)[rank] += 1
            rest = hand.copy()
            need = 0
            for q in range(nat):
                use = int(pend[q] - b2[q] - r2[q])
                take = min(use, int(rest[q]))
                rest[q] -= take
                need += use - take
            rest[jb] -= int(b2.sum() + pend[jb])
            rest[jr] -= int(r2.sum() + pend[jr])
            for j in self.wild_slots:  # later forced stand-ins: the small joker first
                t = min(need, int(rest[j]))
                rest[j] -= t
                need -= t
            rest = np.maximum(rest, 0)
            cost = -100.0 if rest.sum() == 0 else agent.cost(rest)
            key = (cost, -int(rest[jr]), -int(rest[jb] + rest[jr]), i)
            if best is None or key < best[0]:
                best = (key, int(a))
        return best[1]


class PaoDeKuaiPart(GamePart):
    """跑得快: every seat for himself (the must-beat and highest-single rules are the engine's:
    the agent chooses among what is legal).  The table holds trios and airplanes only with
    kickers, so the planner is told that they exist as the bodies of those plays."""

    size_norm = 16

    def plan_view(self, pr):
        copies = self.game.deck.copies
        a = self.game.deck.order.index("A")
        ok = np.array([r < len(copies) and copies[r] >= 3 for r in range(16)], np.bool_)
        trio_ok = pr.trio_ok | ok
        chain_ok = pr.chain_ok.copy()
        chain_ok[3, :a + 1] = ok[:a + 1]
        minlen, maxlen = pr.minlen.copy(), pr.maxlen.copy()
        minlen[3], maxlen[3] = 2, 5
        return pr._replace(trio_ok=trio_ok, chain_ok=chain_ok, minlen=minlen, maxlen=maxlen)


def _part_of(path: str) -> type:
    """The part class named ``"module:Class"`` by a registry record, the module within this
    package (this module's own classes without importing it again)."""
    import importlib

    mod, _, cls = path.partition(":")
    if mod == __name__.rpartition(".")[2]:
        return globals()[cls]
    return getattr(importlib.import_module(f".{mod}", __package__), cls)


#: game name -> its part of the rules agent (the ``rules_part`` of each registry record)
PARTS: dict[str, type] = {name: _part_of(s.rules_part) for name, s in REGISTRY.items()
                          if s.rules_part}


def register_part(game_name: str, part: type) -> None:
    """Register the rules agent's part for a game (used by new games' modules)."""
    if not (isinstance(part, type) and issubclass(part, GamePart)):
        raise TypeError("part must be a GamePart subclass")
    PARTS[game_name] = part
