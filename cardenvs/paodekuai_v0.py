"""跑得快 Pao De Kuai, 3 players, 48 cards, each for himself: ``paodekuai_v0``.

``from cardenvs import paodekuai_v0; env = paodekuai_v0.env(**options)`` or, once ``cardenvs``
is imported, ``pettingzoo.make("aec", "cardenvs/paodekuai-v0")``.

| | |
| --- | --- |
| agents | ``player_0``, ``player_1``, ``player_2`` (seats; no roles) |
| action space | ``Discrete(N)``, N = 89,954 with the default options (89,953 plays + pass) |
| observation | ``{"observation": Box(0, 1, (680,), float32), "action_mask": Box(0, 1, (N,), int8)}`` |
| rewards | bombs that win their trick: +20 / -10 at once; at the end the winner gets 1 per card left in each loser's hand (2 if the loser never played) |
| rules | ``docs/rules/paodekuai.md``; decisions in :mod:`cardenvs.games.paodekuai` |

**Rules variant.** 48 cards (no jokers, no ♥2 ♣2 ♦2 ♠A), 16 each, ranks 3 < 4 < ... < A < 2.
The holder of ♠3 leads and his first play holds a 3.  Plays: single, pair, pair chain (2+),
straight (5+, within 3..A), trio + 2 (any two other cards), airplane (2+ trios within 3..A,
2 kickers a trio), bomb (four of a kind).  A trio or airplane that is the whole remaining hand
may carry fewer kickers.  A follower who can beat must (bombs included); when the next seat
holds one card, a single must be the player's highest card.  The first player out wins.
The action space is large (every trio and airplane with its kickers is its own action).

**Options** (keywords of ``env()``): ``deck="16"|"15"``, ``first_lead="S3"|"H3"``,
``first_play_has_lead_card=True``, ``aaa_bomb=False``, ``four_with_three=False``,
``short_finish=True``, ``must_beat=True``, ``top_single_on_last_card=True``,
``one_card_free=False``, ``bomb_pay=10``, ``reward="score"|"win_loss"``, plus
``illegal``, ``illegal_reward``, ``render_mode``, ``info_legal_actions``.

**Action blocks**: ``play`` (ids ``0..T-1``, one row per canonical play and reading: cards, or
``body+kickers`` such as ``"555+34"``, ``"333444+5566"``; the short last plays ``"555"``,
``"555+3"``), ``pass`` (id ``T``).  ``action_to_string`` / ``string_to_action`` round-trip.

**Custom deals**: ``env.reset(options={"hands": [h0, h1, h2]})`` with suited cards
(``"S3 H3 D4 ..."``, 16 each; the lead card names the leader) or unsuited ones plus
``"leader"``.

**Info** (numeric): ``"phase"`` (its index in ``raw_env.PHASES``: ``auction``, ``play``,
``done``, of which this game has ``play`` and ``done``; a
:class:`~cardenvs.core.infocode.Named` int that prints as its name and compares equal to it),
``"leader"`` (the first leader), ``"scores"`` (each seat's score so far).

**Hidden information.**  A seat sees its own hand; the two other hands are hidden.  Public:
the first leader (so he held the lead card), every play and pass with its seat, the hand
sizes, the bombs that won and the scores so far.  ``render()``, ``history`` and
``get_state()`` show the whole table.

**Observation** (relative seats: 0 = the observer, 1 = the next seat 下家, 2 = the one after):

{layout}
"""

from __future__ import annotations

from .core.aec import CardEnv, env_doc, env_function
from .games.paodekuai import A_LEADER, A_TOTAL, NP, obs_layout


class raw_env(CardEnv, game="paodekuai"):
    """The Pao De Kuai AEC environment (see the module docstring)."""

    def _extra_info(self, info: dict) -> None:
        s = self.state_vec
        info["phase"] = self.phase()
        info["leader"] = int(s[A_LEADER])
        info["scores"] = s[A_TOTAL:A_TOTAL + NP].tolist()  # Python ints


env = env_function(raw_env)


__doc__ = env_doc(__doc__, obs_layout())
