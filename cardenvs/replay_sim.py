"""The game side of a replay: a game's public state and card zones as the viewer shows them,
and the simulation that plays a replay's entries from its deal seed and checks each one against
what the game gives (:class:`_Simulation`, used by :func:`cardenvs.replay.replay_of` to record
and by :func:`cardenvs.replay.verify` to verify, and by the web app's sessions)."""

from __future__ import annotations

import importlib
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from .core.state import (
    BID, CUR, LANDLORD, LAST_ROW, NDOUBLE, PHASE, P_DONE, P_PLAY, WINNER, hand_off, kitty_off,
    played_off,
)
from .registry import REGISTRY, resolve, spec as _spec

if TYPE_CHECKING:
    from .core.game import Game

#: the pile that is not a hand, per game (the state's kitty region; from the registry)
PILE_NAMES = {name: s.pile for name, s in REGISTRY.items()}
#: roles of the one-against-the-rest games as the viewer shows them: (solo, others)
ROLE_NAMES = {name: s.titles for name, s in REGISTRY.items() if s.roles}


# -- the game's public state and card zones ------------------------------------------------------


def _phase_names(game) -> Sequence[str]:
    mod = importlib.import_module(type(game).__module__)
    return getattr(mod, "PHASE_NAMES", ("auction", "play", "done"))


def _zones(game) -> list[tuple[str, int]]:
    """``(name, state offset)`` of every 16-slot card zone a step can change."""
    n = game.n_players
    z = [(f"hand {i}", hand_off(i)) for i in range(n)]
    z += [(f"played {i}", played_off(n, i)) for i in range(n)]
    z.append((PILE_NAMES[game.info.name], kitty_off(n)))
    z += [(zone, int(resolve(path))) for zone, path in _spec(game.info.name).zones]
    return z


def _public(game, s: np.ndarray, phases: Sequence[str]) -> dict:
    """The public facts of a state a viewer shows: phase, seat to move, role, stakes..."""
    name = game.info.name
    ph = int(s[PHASE])
    d: dict[str, Any] = {"phase": phases[ph] if ph < len(phases) else str(ph),
                         "to_move": -1 if ph == P_DONE else int(s[CUR])}
    if name in ROLE_NAMES:
        d["role_seat"] = int(s[LANDLORD])
    if name in ("doudizhu", "doudizhu4", "wakeng"):
        d["bid"] = int(s[BID])
        d["doublings"] = int(s[NDOUBLE])
        stake = int(s[BID]) << int(s[NDOUBLE])
        if name == "wakeng":
            from .games.wakeng import A_OPEN

            d["open"] = int(s[A_OPEN])
            stake *= 2 if d["open"] == 1 else 1
        d["stake"] = stake
    elif name == "niangniang":
        d["places"] = game.places(s)
        d["stuck"] = game.stuck(s)
        d["hands_played"] = game.hands_played(s)
        if game.options["match"]:
            d["totals"] = game.totals(s)
    elif name == "wulong":
        d["declared"] = game.declared(s)
        d["status"] = game.status(s)
        d["head"] = int(s[WINNER])
    facts = getattr(game, "public_facts", None)  # a game's own public facts (its hook)
    if facts is not None:
        d.update(facts(s))
    return d


def _places(game, s: np.ndarray) -> Optional[list[int]]:
    """Places of the deal just finished: the game's own order (Da Niangniang, Lanxi Wulong),
    else 1 for the winning side and 2 for the other (``None`` for a void deal)."""
    how = _spec(game.info.name).places
    if how == "last_places":
        return game.last_places(s)
    if how == "ranking":
        order = game.ranking(s)
        return [order.index(q) + 1 for q in range(game.n_players)]
    w = int(s[WINNER])
    if w < 0:
        return None
    if how == "winner":
        return [1 if q == w else 2 for q in range(game.n_players)]
    solo = int(s[LANDLORD])
    win_solo = w == solo
    return [1 if (q == solo) == win_solo else 2 for q in range(game.n_players)]


def _num(x: float):
    """A reward as JSON: an int when it is one."""
    x = float(x)
    return int(x) if x.is_integer() else x


def _joker_slots(game) -> list[int]:
    return [i for i, ch in enumerate(game.deck.order) if ch in "BR"]


def _realised(game, row: int, phys: np.ndarray) -> str:
    """A play row made of the physical cards ``phys``: the row's string, or with jokers
    standing in the ``45R[6]78`` notation (jokers take the lowest stood-for ranks, ``B``
    before ``R``, as both wild-joker games label them)."""
    eff = game.tab.counts[row].astype(np.int64)
    if np.array_equal(eff[:16], phys[:16]):
        return game.action_to_string(row)
    from .core.wild import format_wild

    js = _joker_slots(game)
    stood = np.maximum(eff - phys, 0)
    for j in js:
        stood[j] = 0
    ranks = [r for r in range(16) for _ in range(int(stood[r]))]
    stands = np.zeros((16, 16), np.int64)
    k = 0
    for j in js:
        for _ in range(int(phys[j] - eff[j])):
            if k < len(ranks):
                stands[j, ranks[k]] += 1
                k += 1
    return format_wild(game.deck, eff, stands, js)


def play_cards(game: Game, hand: np.ndarray, row: int, picked: np.ndarray) -> np.ndarray:
    """The physical cards a hand spends on play ``row`` (Da Niangniang's rule): jokers stand
    in where the hand lacks the rank, plus the ``picked`` voluntary stand-ins; ``B`` first."""
    eff = game.tab.counts[row].astype(np.int64)[:16].copy()
    js = _joker_slots(game)
    phys = eff.copy()
    n_j = 0
    for r in range(16):
        if r in js:
            continue
        stood = max(0, int(eff[r] - hand[r])) + int(picked[r])
        phys[r] -= stood
        n_j += stood
    for j in js:
        use = min(n_j, int(hand[j]) - int(phys[j]))
        phys[j] += use
        n_j -= use
    return phys


def _moves(game, names: list[str], before: np.ndarray, after: np.ndarray) -> list:
    """Cards that changed zone in a step: ``[from, to, cards]`` triples (``None`` where the
    cards came from or went to no zone, e.g. Wakeng's digger takes the kitty, which stays
    on the table as the record of what the kitty was)."""
    delta = after - before
    flows: dict[tuple, np.ndarray] = {}
    for r in range(delta.shape[1]):
        col = delta[:, r]
        if not col.any():
            continue
        losses = [[int(z), -int(col[z])] for z in np.flatnonzero(col < 0)]
        gains = [[int(z), int(col[z])] for z in np.flatnonzero(col > 0)]
        li = 0
        for g in gains:
            while g[1] > 0:
                if li < len(losses):
                    take = min(g[1], losses[li][1])
                    key = (int(losses[li][0]), int(g[0]))
                    losses[li][1] -= take
                    if losses[li][1] == 0:
                        li += 1
                else:
                    take, key = g[1], (-1, int(g[0]))
                flows.setdefault(key, np.zeros(16, np.int64))[r] += take
                g[1] -= take
        for z, left in losses[li:]:
            if left:
                flows.setdefault((int(z), -1), np.zeros(16, np.int64))[r] += left
    return [[None if a < 0 else names[a], None if b < 0 else names[b], game.deck.format(c)]
            for (a, b), c in sorted(flows.items())]


# -- building a replay ------------------------------------------------------------------------------


def _deal_state(game, deal_seed: int, reset_options: Optional[dict]) -> np.ndarray:
    s = game.new_state()
    if reset_options and set(reset_options) & set(game.deal_keys):
        game.custom_deal(s, reset_options, deal_seed)
    else:
        game.reset(s, deal_seed)
    return s


class _Simulation:
    """A replay built one action at a time: :meth:`push` plays an action id on the deal and
    records it (``deals``, ``actions`` and the state ``s`` grow as the replay writes them),
    :meth:`result` is the ``result`` record so far.  :func:`_simulate` plays a whole list;
    the web app keeps one per game and pushes each new action (a push costs the same however
    long the game is)."""

    def __init__(self, game, deal_seed: int, reset_options: Optional[dict]):
        self.game = game
        self.n = n = game.n_players
        self.phases = _phase_names(game)
        zones = _zones(game)
        self.names = [z for z, _ in zones]
        self.idx = np.array([[o + r for r in range(16)] for _, o in zones], np.int64)
        self.T = len(game.table)
        self.s = _deal_state(game, deal_seed, reset_options)
        self.deals = [self._deal_record(0)]
        self.actions: list[dict] = []
        self.totals = np.zeros(n)
        self.pending = [-1] * n
        self.picked = [np.zeros(16, np.int64) for _ in range(n)]
        self.prev_pub = self.deals[0]["state"]
        self.legal_buf = np.zeros(game.n_actions, np.int64)

    def _deal_record(self, start: int) -> dict:
        game, s, names = self.game, self.s, self.names
        z = s[self.idx]
        piles = {nm: game.deck.format(z[k]) for k, nm in enumerate(names)
                 if not nm.startswith(("hand ", "played "))}
        return {"start": start, "hands": [game.deck.format(z[i]) for i in range(self.n)],
                "piles": piles, "state": _public(game, s, self.phases)}

    def push(self, e, where: Callable[[], str]) -> dict:
        """Play entry ``e`` (an action id, or a dict with ``"id"``/``"seat"``) and record it;
        returns its action record.  An entry that is not an action id of the game, names the
        wrong seat, or is illegal here is a ``ValueError`` starting with ``where()`` (nothing
        is recorded then)."""
        game, s, n, names = self.game, self.s, self.n, self.names
        i = len(self.actions)
        if isinstance(e, dict):
            a, seat_given = e.get("id"), e.get("seat")
        else:
            a, seat_given = e, None
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise ValueError(f"{where()}: 'id' must be an integer action id, got {a!r}")
        a = int(a)
        if game.done(s):
            raise ValueError(f"{where()}: the game is already over; this action and any after "
                             f"it cannot be played")
        seat = game.current(s)
        if seat_given is not None and seat_given != seat:
            raise ValueError(f"{where()}: seat {seat_given!r} acts, but player_{seat} is to move")
        if not 0 <= a < game.n_actions:
            raise ValueError(f"{where()}: action id {a} is outside the action space "
                             f"[0, {game.n_actions})")
        if not game.is_legal(s, a):
            k = game.legal(s, self.legal_buf)
            shown = ", ".join(game.action_to_string(x) for x in self.legal_buf[:min(k, 8)])
            more = "" if k <= 8 else f", ... ({k} in all)"
            raise ValueError(f"{where()}: action {a} ({game.action_to_string(a)!r}) is illegal "
                             f"for player_{seat} here (phase {self.prev_pub['phase']}); legal: "
                             f"{shown}{more}")
        pending, picked = self.pending, self.picked
        lead = int(s[PHASE]) == P_PLAY and int(s[LAST_ROW]) < 0
        before = s[self.idx]
        if a < self.T:
            pending[seat] = a
            picked[seat] = np.zeros(16, np.int64)
        elif pending[seat] >= 0 and game.block_of(a) == "joker":
            txt = game.action_to_string(a)
            if txt.startswith("joker as "):  # Da Niangniang: one more joker stands in for X
                picked[seat][game.deck.index(txt[-1])] += 1
        game.step(s, a)
        after = s[self.idx]
        r = game.rewards(s)
        self.totals += r
        rec: dict[str, Any] = {"seat": seat, "id": a, "action": game.action_to_string(a)}
        if lead:
            rec["lead"] = True
        # a new deal (a redeal, the next hand of a match, the real deal after a draw):
        # several hands change at once, or cards leave the played piles
        played_back = bool((after[n:2 * n] < before[n:2 * n]).any())
        hands_changed = int((after[:n] != before[:n]).any(axis=1).sum())
        new_deal = played_back or hands_changed >= 2
        if not new_deal:
            mv = _moves(game, names, before, after)
        elif pending[seat] >= 0 and a != game.pass_id:
            # the play that ended a hand of a match: the next deal has replaced the table, so
            # its cards are worked out from the hand, the row and the joker picks
            phys = play_cards(game, before[seat], pending[seat], picked[seat])
            mv = [[names[seat], names[n + seat], game.deck.format(phys)]]
        else:
            mv = []
        if mv:
            rec["moves"] = mv
        for src, dst, cards in mv:
            if dst == f"played {seat}" and src == f"hand {seat}" and pending[seat] >= 0:
                rec["play"] = _realised(game, pending[seat], game.deck.parse(cards))
                pending[seat] = -1
        pub = _public(game, s, self.phases)
        changed = {k: v for k, v in pub.items() if self.prev_pub.get(k) != v}
        if changed:
            rec["state"] = changed
        self.prev_pub = pub
        ended = game.done(s) or new_deal
        if ended:
            res: dict[str, Any] = {"scores": [_num(x) for x in r]}
            places = _places(game, s) if (r.any() or game.done(s)) else None
            if places is not None:
                res["places"] = places
            self.deals[-1]["result"] = res
            self.deals[-1]["end"] = i + 1
        if new_deal:
            rec["deal"] = len(self.deals)
            self.pending = [-1] * n
            self.deals.append(self._deal_record(i + 1))
            self.prev_pub = self.deals[-1]["state"]
        self.actions.append(rec)
        return rec

    def result(self, illegal_seat: Optional[int] = None,
               where: Callable[[], str] = lambda: "result") -> dict:
        """The replay's ``result`` record after the actions pushed so far (``illegal_seat``:
        the seat whose illegal move ended the game, ``ValueError`` starting with ``where``
        when the game does not stand at its turn)."""
        game, s = self.game, self.s
        result: dict[str, Any] = {"done": bool(game.done(s))}
        if illegal_seat is not None:
            if game.done(s) or game.current(s) != illegal_seat:
                raise ValueError(f"{where()}: the result says player_{illegal_seat} made "
                                 f"an illegal move, but the game does not stand at his turn")
            result["done"] = True
            result["illegal_move"] = illegal_seat
        result["rewards"] = [_num(x) for x in self.totals]
        if game.done(s):
            result["winner"] = int(s[WINNER])
            result["places"] = _places(game, s)
            if game.info.name == "niangniang" and game.truncated(s):
                result["truncated"] = True
        return result


def _simulate(game, deal_seed: int, reset_options: Optional[dict], entries: Sequence,
              where: Callable[[int], str], illegal_seat: Optional[int] = None):
    """Play ``entries`` (action ids, or dicts with ``"id"``/``"seat"``) from the deal; return
    ``(deals, actions, result, state)`` as the replay writes them.

    An entry that is not an action id of the game, names the wrong seat, or is illegal at its
    point is a ``ValueError`` starting with ``where(i)``.
    """
    sim = _Simulation(game, deal_seed, reset_options)
    for i, e in enumerate(entries):
        sim.push(e, partial(where, i))
    result = sim.result(illegal_seat, lambda: where(len(entries)))
    return sim.deals, sim.actions, result, sim.s
