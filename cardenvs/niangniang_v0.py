"""打娘娘 Da Niangniang, 4 players, 54 cards: ``niangniang_v0``.

``from cardenvs import niangniang_v0; env = niangniang_v0.env(**options)`` or, once
``cardenvs`` is imported, ``pettingzoo.make("aec", "cardenvs/niangniang-v0")``.

| | |
| --- | --- |
| agents | ``player_0`` .. ``player_3`` (seats; the 娘娘 is chosen by the 亮3 draw, later by the scores) |
| action space | ``Discrete(N)``, N = 349 with the default options (306 plays + pass + 15 take + 13 return + 14 joker picks); 351 with ``first_niangniang="reveal_choice"`` (+ reveal / hide) |
| observation | ``{"observation": Box(0, 1, (D,), float32), "action_mask": Box(0, 1, (N,), int8)}``, D = {obs_size} |
| rewards | each hand's score, to every seat, when the hand ends (one hand per episode unless ``match=True``), or the sign of each hand's score (+1 / 0 / -1, ``reward="win_loss"``), paid when each hand ends |
| rules | ``docs/rules/niangniang.md``; variants and every choice the page leaves open in :mod:`cardenvs.games.niangniang` |

**Rules in short.** One deck of 54; ranks 3 < 4 < ... < A < 2, the jokers ``B`` ``R`` are wild
cards.  The first 娘娘 is the first player to receive a 3 in a seeded draw; 10 cards to each
seat, 14 to the bottom; the 娘娘 takes 4 bottom cards and returns 4 of his 10 dealt cards (never
a joker).  The 娘娘's next seat leads.  Plays: single, pair, trio, trio + pair, straight (>= 5
within 3..A), pair chain (>= 2 pairs), bombs of 4 to 6 cards of one rank (size first, then
rank), ``BR`` the weakest bomb.  A joker stands in for any natural rank of a play that holds
at least one natural card (``5B`` = ``55``, ``333B`` = ``3333``) and is never played alone; a
player left with one joker only is stuck.  Play continues until the finishing order is known;
the 娘娘 scores +6/+3/-3/-6 by place, the catchers +2/+1/-1/-2 (+1/0/-1 among themselves when
the 娘娘 is first), and the 娘娘 loses 1 per 活子 (a card other than 3, 2, B, R) among the 4
cards he returned.

**Rules queries**: ``cardenvs.legal_moves("niangniang", hand, prev)`` lists every
realisation of every legal play, a joker standing for rank X written as the joker followed by
``[X]`` (``legal_moves("niangniang", "55B") == ["5", "55", "5B[5]", "55B[5]"]``);
``plain=True`` lists the effective plays instead (``["5", "55", "555"]``).  ``prev`` may be
written either way (``legal_moves("niangniang", "555R", prev="44B[4]")`` equals the answer
for ``prev="444"``).

**Options** (keywords of ``env()``): ``rank_order="standard"|"three_high"``,
``first_niangniang="first_three"|"reveal_choice"|"random_seat"``,
``joker_wild_scope="any_combo"|"bombs_only"``, ``scoring="seed"|"positional"|"zero_sum"``,
``huozi_scope="returned"|"bottom"``, ``huozi_when="always"|"last"|"never"``, ``match=False``,
``target_score=40``, ``max_hands=100``, ``reward="score"|"win_loss"``,
``allow_trio_single=False``, ``min_pair_chain=2`` (2..5), ``illegal="lose"|"raise"``,
``illegal_reward=-1``, ``render_mode=None|"ansi"|"human"|"rgb_array"``.  ``allow_trio_single`` and
``min_pair_chain`` change the play table and so ``N`` (``allow_trio_single=True``: 462 plays).

**Action blocks** (``env.unwrapped.game.blocks``, default options):

| block | ids | strings | used |
| --- | --- | --- | --- |
| ``play`` | 0..305 | effective plays, e.g. ``"55"``, ``"34567"``, ``"555+66"``, ``"55555"``, ``"BR"`` | play phase |
| ``pass`` | 306 | ``"pass"`` | following |
| ``reveal`` | (only with ``reveal_choice``) | ``"reveal"``, ``"hide"`` | a player who receives a 3 in the draw |
| ``take`` | 307..321 | ``"take 3"`` .. ``"take 2"``, ``"take B"``, ``"take R"`` | the 娘娘, 4 turns in a row |
| ``return`` | 322..334 | ``"return 3"`` .. ``"return 2"`` (never a joker; only ranks of his 10 dealt cards) | the 娘娘, 4 turns in a row |
| ``joker`` | 335..348 | ``"joker as 3"`` .. ``"joker as 2"``, ``"no more jokers"`` | the player who just chose a play, when he may spend a joker voluntarily |

*Plays are effective plays.*  A play id names the cards the play counts as (``"5555"``) and
its reading, not which physical cards make it: holding ``555B`` the id ``"5555"`` is played
with the joker standing in for the missing 5 (forced stand-ins are automatic).  When the hand
could also spend a joker where it holds the natural card (holding ``55B``, the pair ``"55"``
can be ``55`` or ``5B``), the same agent moves again in the ``joker`` block: ``"joker as r"``
puts one more joker in for a card of rank r of the play (ranks in non-decreasing order), and
``"no more jokers"`` plays it; this follow-up is offered only when such a choice exists.
Which joker stands in is canonical (``B`` first: the two jokers play alike).  On a free lead
the legal actions are plays only; against a play, the beating plays and ``pass``.
``env.unwrapped.action_to_string(a)`` / ``string_to_action(s)`` round-trip.

**Custom deals** (rules README, convention 8): ``env.reset(options={"hands": [h0, h1, h2, h3],
"bottom": b, "niangniang": seat})``: 10 cards a hand, 14 in the bottom (default: the rest of
the deck); ``niangniang`` is required (the draw would decide it).  The 娘娘 then plays the
exchange.  Add ``"returned": "4567"`` (4 bottom cards, no joker) to give the position *after*
the exchange: the hands and bottom are then as after it, those are the returned cards (for
the 活子 penalty) and the 娘娘's next seat leads at once.  An impossible deal is a
``ValueError`` that says what is wrong and leaves the current game untouched.  In a match the
custom deal is the first hand; later hands are dealt from the seed.

**Info** (fixed-shape; the legal ids are ``env.unwrapped.legal_actions()``, and with
``info_legal_actions=True`` also ``infos[agent]["legal_actions"]``; every entry is numeric):
``"phase"`` (its index in ``raw_env.PHASES``: ``reveal``, ``play``, ``done``, ``take``,
``return``, ``joker``; a :class:`~cardenvs.core.infocode.Named` int that prints as its name
and compares equal to it), ``"niangniang"`` (seat or -1),
``"places"`` (per seat: 0 active, 1..4), ``"stuck"`` (per seat), ``"leader"`` (the hand's first
leader, -1 before the play), ``"hand"`` (hands finished).  With ``match=True`` also ``"totals"``
(match totals per seat), ``"last_scores"`` / ``"last_places"`` (of the last finished hand) and,
at the end, ``"winner"`` (seat, -1 when a truncated match has no single leader) and
``"truncated"``.  A match stopped by ``max_hands`` ends with ``truncations`` (not
``terminations``) set.

**Hidden information.**  亮3 draw (``first_niangniang="reveal_choice"``): the draw's cards
are in no observation; the draw number and the 3s offered so far are public, and so is the
seat asked to reveal or hide (it is the seat to move), so receiving a 3 is public even when
hidden.  Deal: a seat observes its own 10 cards.  Exchange: the 娘娘 sees the 14 bottom cards
and what he takes and returns; the catchers see only how many cards are taken and returned and
his hand size (the picks are not in ``recent``).  Joker follow-up: only the mover sees the play
he is completing (every other seat observes the play phase, as before he chose it); once it is
played, its physical cards and what each joker stood for are public.  Play: plays, passes,
places and stuck seats are public.  When the episode ends the taken, returned and bottom cards
are shown to everyone; in a match the next hand is dealt at
once, so the catchers never see the bottom of any hand but the last (the last hand's scores,
which show the 活子 penalty, are public).  ``render()``, ``history`` and ``get_state()`` show
the whole table.

**Observation** (relative seats: 0 = the observer, 1 = the next seat 下家, ...; card fields are
15 ranks x planes, rank index 0 = the lowest natural rank, 13 = ``B``, 14 = ``R``):

{layout}
"""

from __future__ import annotations

from typing import cast

from .core.aec import CardEnv, env_doc, env_function
from .core.state import FIRST, LANDLORD, WINNER
from .games.niangniang import PHASE_NAMES, Niangniang, obs_layout


class raw_env(CardEnv, game="niangniang"):
    """The Da Niangniang AEC environment (see the module docstring)."""

    PHASES = PHASE_NAMES

    def _extra_info(self, info: dict) -> None:
        g = cast(Niangniang, self.game)
        s = self.state_vec
        info["phase"] = self.phase()
        info["niangniang"] = int(s[LANDLORD])
        info["places"] = g.places(s)
        info["stuck"] = g.stuck(s)
        info["leader"] = int(s[FIRST])
        info["hand"] = g.hands_played(s)
        if g.options["match"]:
            info["totals"] = g.totals(s)
            info["last_scores"] = g.last_scores(s)
            info["last_places"] = g.last_places(s)
            if g.done(s):
                info["winner"] = int(s[WINNER])
                info["truncated"] = g.truncated(s)

    def _after_move(self) -> None:
        super()._after_move()
        g = cast(Niangniang, self.game)
        if g.done(self.state_vec) and g.truncated(self.state_vec):
            for a in self.agents:  # a match stopped by max_hands is truncated, not terminated
                self.terminations[a] = False
                self.truncations[a] = True


env = env_function(raw_env)


__doc__ = env_doc(__doc__, obs_layout())
