"""One game of the web app: a deal (or a Da Niangniang match) against agents, or between agents.

:class:`GameSession` holds the AEC env and the agents (:func:`cardenvs.play.seat_agents`, the
table ``cardenvs play`` sets up), takes the player's action ids (checked: an id that is not
legal now, or was sent for an earlier turn, is a ``ValueError`` and the game is unchanged),
plays the agents' moves one at a time, and describes the table for the browser
(:meth:`GameSession.view`): the game as a replay (:mod:`cardenvs.replay`'s format, the one the
replay viewer draws) with what the player may not see hidden, and at the player's turn the
legal actions with their labels and the cards each card play takes from the hand.

The replay is built as the game goes, one action at a time, and so is the player's (hidden)
copy of it; a view can carry only what changed since an earlier one (``delta``), so preparing
a message costs the same at the first move as at the thousandth of a long match.

Nothing here needs the web stack: :mod:`cardenvs.web.server` runs sessions in its worker
threads, one session per browser connection.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Optional, Union

import numpy as np

from ..core.state import hand_off
from ..play import PUBLIC_BLOCKS, _card_field, _public, _wild_slots, agent_move, seat_agents
from ..replay import _env_options, _header, dumps
from ..replay_sim import _phase_names, _public as _public_state, _Simulation, _zones, play_cards

#: what a card the viewer cannot see is written as in the replays a player receives
HIDDEN = "?"


class GameSession:
    """A game in the browser.  ``seat`` is the player's seat, ``None`` to watch agents play
    every seat; ``agents`` (a comma-separated string or a list of specs) fill the other seats
    in turn; ``seed`` fixes the deal (drawn when ``None``).  Bad arguments are a
    ``ValueError`` / ``TypeError`` naming what is wrong (:func:`cardenvs.play.seat_agents`)."""

    def __init__(self, game: str, options: Optional[dict] = None, seat: Optional[int] = 0,
                 agents: Union[str, list] = "rules", seed: Optional[int] = None):
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be an object of game options, got "
                            f"{type(options).__name__}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                                 or not 0 <= seed < 2**31):
            raise ValueError(f"seed must be an int in [0, 2**31), got {seed!r}")
        self.env, self.bots, self.seed = seat_agents(game, agents, seat, seed, options)
        self.name = game
        self.seat = seat
        self.game = self.env.unwrapped.game
        n = self.game.n_players
        self.players = ["you" if i == seat else self.bots[i][0] for i in range(n)]
        self._index = {a: i for i, a in enumerate(self.env.possible_agents)}
        self.env.reset(seed=self.seed)
        u = self.env.unwrapped
        seed_, rng_state, deal_seed, reset_options = u._replay_start
        self._header = _header(self.game, _env_options(u), seed_, rng_state, deal_seed,
                               reset_options)
        self._header["players"] = self.players
        #: the replay so far, one action pushed per step (:meth:`_sync`)
        self._sim = _Simulation(self.game, deal_seed, reset_options)
        #: the player's copy: redacted deals and actions, made with ``_red_piles``; rebuilt
        #: (a new ``_epoch``) when what he sees of the piles changes
        self._red_piles: Optional[dict] = None
        self._red_deals: list[dict] = []
        self._red_actions: list[dict] = []
        self._epoch = 0
        self._advance()

    # -- where the game stands --------------------------------------------------------------------

    def _advance(self) -> None:
        """Step past the seats whose game is over (PettingZoo's ``step(None)``), then bring
        the replay up to the env's history."""
        env = self.env
        while env.agents and (env.terminations[env.agent_selection]
                              or env.truncations[env.agent_selection]):
            env.step(None)
        self._sync()

    def _sync(self) -> None:
        """Push the env's actions the replay lacks; its state must then be the env's."""
        u = self.env.unwrapped
        history = u.history
        sim = self._sim
        for i in range(len(sim.actions), len(history)):
            sim.push(history[i], partial("history[{}]".format, i))
        if not np.array_equal(sim.s, u.state_vec):
            raise RuntimeError("the replay does not follow the game's state")

    @property
    def done(self) -> bool:
        """Whether the game (the deal, or the whole match) is over."""
        return not self.env.agents

    @property
    def to_move(self) -> Optional[int]:
        """The seat to move (``None`` when the game is over)."""
        return None if self.done else self._index[self.env.agent_selection]

    @property
    def turn(self) -> int:
        """The number of actions played so far (the player's action names the turn it answers)."""
        return len(self.env.unwrapped.history)

    @property
    def players_turn(self) -> bool:
        """Whether the player (not an agent) is to move."""
        return self.seat is not None and self.to_move == self.seat

    # -- moves ------------------------------------------------------------------------------------

    def act(self, action: Any, turn: Any) -> int:
        """Play the player's ``action`` (an id) chosen at ``turn``; ``ValueError`` saying why
        when it is not the player's turn, ``turn`` is not the current one (a stale message)
        or the id is not a legal action now: the game is unchanged then."""
        for what, v in (("action id", action), ("turn", turn)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"the {what} must be an integer, got {v!r}")
        if self.done:
            raise ValueError("the game is over: start a new one")
        if self.seat is None:
            raise ValueError("you are watching: the agents play every seat")
        if not self.players_turn:
            raise ValueError(f"it is not your turn (player_{self.to_move} is to move)")
        if turn != self.turn:
            raise ValueError(f"that move was for turn {turn}, but the game is at turn "
                             f"{self.turn}: the table has changed (a stale message)")
        legal = self.env.unwrapped.legal_actions()
        if action not in set(legal.tolist()):
            shown = (f" ({self.game.action_to_string(action)!r})"
                     if 0 <= action < self.game.n_actions else "")
            raise ValueError(f"action {action}{shown} is not a legal move now")
        self.env.step(int(action))
        self._advance()
        return int(action)

    def agent_step(self, deadline: Optional[float] = None) -> tuple[int, int]:
        """Let the agent to move play; ``(seat, action)``.  ``deadline``: a
        ``time.perf_counter()`` time by which an agent that can cut its search short decides
        (``search``: :attr:`cardenvs.agents.search.SearchAgent.deadline`, set for this move
        only; the other agents ignore it).  ``ValueError`` at the player's turn or after the
        game."""
        if deadline is not None and (isinstance(deadline, bool)
                                     or not isinstance(deadline, (int, float))):
            raise TypeError(f"deadline must be a time.perf_counter() time in seconds or None, "
                            f"got {type(deadline).__name__}")
        if self.done or self.players_turn:
            raise ValueError("no agent is to move")
        seat = self.to_move
        assert seat is not None  # the game is not over
        bot = self.bots[seat][1]
        timed = deadline is not None and hasattr(bot, "deadline")
        if timed:
            bot.deadline = deadline  # type: ignore[attr-defined]  # a search agent's
        try:
            a = agent_move(self.env, bot)
        finally:
            if timed:
                bot.deadline = None  # type: ignore[attr-defined]
        self.env.step(a)
        self._advance()
        return seat, a

    # -- what the browser sees --------------------------------------------------------------------

    def legal(self) -> list[dict]:
        """The player's legal actions: ``id``, ``text`` (``action_to_string``), ``block``, and
        for a card play the ``cards`` it takes from the hand (wild jokers standing in where
        the hand lacks a rank), their ``counts`` per rank and the play's ``reading``."""
        if not self.players_turn:
            return []
        g = self.game
        s = self.env.unwrapped.state_vec
        hand = s[hand_off(self.seat):hand_off(self.seat) + 16].astype(np.int64)
        none = np.zeros(16, np.int64)
        T = len(g.table)
        R = g.deck.n_ranks
        out = []
        for a in self.env.unwrapped.legal_actions().tolist():
            d: dict[str, Any] = {"id": int(a), "text": g.action_to_string(a),
                                 "block": g.block_of(a)}
            if a < T:
                phys = play_cards(g, hand, a, none)
                d["cards"] = g.deck.format(phys)
                d["counts"] = [int(x) for x in phys[:R]]
                d["reading"] = g.table.reading(a)
            out.append(d)
        return out

    def hand(self, seat: int) -> str:
        """The cards seat ``seat`` holds now, in the rules notation."""
        s = self.env.unwrapped.state_vec
        return self.game.deck.format(s[hand_off(seat):hand_off(seat) + 16])

    def replay(self) -> dict:
        """The full replay so far (every card shown; what ``env.unwrapped.replay()`` gives)."""
        rep = dict(self._header)
        rep["deals"] = [dict(d) for d in self._sim.deals]
        rep["actions"] = list(self._sim.actions)
        rep["result"] = self._sim.result()
        return rep

    def view(self, since: Optional[list] = None) -> dict:
        """The ``state`` message: the replay so far (the player's view: other hands, piles he
        cannot see and other seats' private choices hidden; everything once the game is over
        or when watching), the known ``hands``, the turn, the seat to move, the legal actions
        at the player's turn, and at the end the rewards and the full replay as JSON.

        ``sync`` names the replay the message carries; given the ``sync`` of an earlier
        message as ``since``, the message carries instead of the whole ``replay`` only a
        ``delta`` to apply to that one: the actions from ``actions_from`` on, the deals from
        ``deals_from`` on (they replace the earlier message's from there) and the ``result``.
        The whole replay comes when ``since`` is ``None`` or no longer fits (what the player
        sees of the piles changed, which rewrites earlier records), and at the end."""
        g = self.game
        full = self.seat is None or self.done
        if full:
            deals, actions, epoch = self._sim.deals, self._sim.actions, -1
        else:
            deals, actions = self._redacted_records()
            epoch = self._epoch
        sync = [epoch, len(actions), len(deals)]
        msg: dict[str, Any] = {
            "type": "state", "game": self.name, "seat": self.seat, "seed": self.seed,
            "turn": self.turn, "to_move": self.to_move, "done": self.done,
            "players": self.players, "wild": list(_wild_slots(g)[1]),
        }
        result = self._sim.result()
        if (since is not None and not self.done and isinstance(since, (list, tuple))
                and len(since) == 3 and since[0] == epoch
                and 0 <= since[1] <= len(actions) and 1 <= since[2] <= len(deals)):
            k, j = since[1], since[2] - 1  # the last deal sent may have ended since
            msg["delta"] = {"actions_from": k, "actions": actions[k:],
                            "deals_from": j, "deals": deals[j:], "result": result}
        else:
            rep = {k: v for k, v in self._header.items()
                   if full or k not in ("seed", "rng_state", "deal_seed", "reset_options",
                                        "meta")}
            rep["deals"] = [dict(d) for d in deals]
            rep["actions"] = list(actions)
            rep["result"] = result
            msg["replay"] = rep
        msg["sync"] = sync
        msg["hands"] = ({str(i): self.hand(i) for i in range(g.n_players)} if full
                        else {str(i): self.hand(i) for i in self._known_hands()})
        msg["legal"] = self.legal()
        if self.done:
            msg["rewards"] = result["rewards"]
            msg["replay_json"] = dumps(msg["replay"])
        return msg

    def _known_hands(self) -> list[int]:
        """The seats whose hand the player sees: his own, a declared (报牌) hand, an open hand."""
        g = self.game
        s = self.env.unwrapped.state_vec
        pub = _public_state(g, s, _phase_names(g))
        seats = {self.seat, *pub.get("declared", [])}
        if pub.get("open") == 1 and pub.get("role_seat", -1) >= 0:
            seats.add(int(pub["role_seat"]))
        return sorted(seats)

    def _visible_piles(self) -> dict[str, bool]:
        """Per pile (kitty, bottom, buried, unused ...): whether the player sees its cards now
        (his observation holds them, or it is empty)."""
        g = self.game
        s = self.env.unwrapped.state_vec
        obs = self.env.observe(self.env.possible_agents[self.seat])["observation"]
        out = {}
        for name, off in _zones(g):
            if name.startswith(("hand ", "played ")):
                continue
            held = np.asarray(s[off:off + 16], np.int64)
            seen = _card_field(g, obs, name)
            out[name] = (not held.any()) or (seen is not None and np.array_equal(seen, held))
        return out

    def _redacted_records(self) -> tuple[list[dict], list[dict]]:
        """``(deals, actions)`` of the replay as the player may see them: the other seats'
        cards, the piles he cannot see and the cards of other seats' private choices
        (burying, the exchange) written as ``?``; those choices' strings as ``_public`` shows
        them.  Kept between calls: the actions added since are redacted, and the last deal
        (it gains its result when it ends); when what he sees of the piles has changed, all
        of them again (a new ``_epoch``)."""
        piles = self._visible_piles()
        if piles != self._red_piles:
            self._red_piles = piles
            self._red_deals, self._red_actions = [], []
            self._epoch += 1
        sim = self._sim
        deals = self._red_deals
        del deals[max(0, len(deals) - 1):]
        deals += [self._redact_deal(d) for d in sim.deals[len(deals):]]
        actions = self._red_actions
        actions += [self._redact_action(r) for r in sim.actions[len(actions):]]
        return deals, actions

    def _hide(self, cards: str) -> str:
        return HIDDEN * len(cards)

    def _piles_seen(self) -> dict:
        """Per pile, whether the player sees its cards (set before any redaction)."""
        piles = self._red_piles
        assert piles is not None, "the player's view of the piles is made before redacting"
        return piles

    def _redact_deal(self, d: dict) -> dict:
        piles, hide = self._piles_seen(), self._hide
        d = dict(d)
        d["hands"] = [h if i == self.seat else hide(h) for i, h in enumerate(d["hands"])]
        d["piles"] = {k: v if piles.get(k, False) else hide(v) for k, v in d["piles"].items()}
        return d

    def _visible(self, zone: Optional[str]) -> bool:
        """Whether the player sees the cards of ``zone`` (``None``: the game's pile)."""
        piles = self._piles_seen()
        if zone is None:
            return piles[next(iter(piles))]  # the game's pile (cards moved from "no zone")
        if zone.startswith("played "):
            return True
        if zone.startswith("hand "):
            return zone == f"hand {self.seat}"
        return piles.get(zone, False)

    def _redact_action(self, rec: dict) -> dict:
        g, visible, hide = self.game, self._visible, self._hide
        rec = dict(rec)
        public = rec["seat"] == self.seat or g.block_of(rec["id"]) in PUBLIC_BLOCKS
        if not public:
            rec["action"] = _public(g, rec.pop("id"))
        if "moves" in rec:
            moves = []
            for src, dst, cards in rec["moves"]:
                if visible(dst) or (visible(src) and public):
                    moves.append([src, dst, cards])
                elif visible(src):  # he sees the cards leave, not where they go
                    moves += [[src, None, cards], [None, dst, hide(cards)]]
                else:
                    moves.append([src, dst, hide(cards)])
            rec["moves"] = moves
        return rec
