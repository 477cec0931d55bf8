"""斗地主 Dou Dizhu, 3 players: ``doudizhu_v0``.

``from cardenvs import doudizhu_v0; env = doudizhu_v0.env(**options)`` or, once ``cardenvs``
is imported, ``pettingzoo.make("aec", "cardenvs/doudizhu-v0")``.

| | |
| --- | --- |
| agents | ``player_0``, ``player_1``, ``player_2`` (seats; the landlord is chosen by the auction) |
| action space | ``Discrete(N)``, N = 28,241 with ``preset="seed"`` (see blocks below) |
| observation | ``{"observation": Box(0, 1, (D,), float32), "action_mask": Box(0, 1, (N,), int8)}`` |
| rewards | terminal, to every seat: the score (landlord +-2 stake, farmers -+stake) or +-1 |
| rules | ``docs/rules/doudizhu.md`` (3 players); variants in :mod:`cardenvs.games.doudizhu` |

**Options** (keywords of ``env()``): ``auction="bid"|"fixed"``, ``all_pass="void"|"redeal"``,
``max_redeals=3``, ``spring=False``, ``reward="score"|"win_loss"``,
``preset="seed"|"douzero"|"rlcard"``, ``illegal="lose"|"raise"``, ``illegal_reward=-1``,
``render_mode=None|"ansi"|"human"|"rgb_array"``.

**Action blocks** (``env.unwrapped.game.blocks``): ``play`` = one id per canonical play and
reading (``action_to_string`` writes plays with kickers as ``body+kickers``, e.g.
``"333444+59"``), then ``pass`` (used in the auction and in play), then ``bid 1..3``.
Against a play, legal actions are the beating plays and ``pass``; on a free lead, plays only.
``env.unwrapped.action_to_string(a)`` / ``string_to_action(s)`` round-trip.

**Custom deals**: ``env.reset(options={"hands": [h0, h1, h2], "kitty": "BR2",
"landlord": 0, "bid": 3})`` (17 cards per hand, 3 in the kitty; ``landlord`` and ``bid``
together skip the auction; ``first_bidder`` fixes who bids first).  An impossible deal is a
``ValueError`` and leaves the current game untouched.

**Info** (fixed-shape; the legal ids are ``env.unwrapped.legal_actions()``, and with
``info_legal_actions=True`` also ``infos[agent]["legal_actions"]``; every entry is numeric):
``"phase"`` (its index in ``raw_env.PHASES``: ``auction``, ``play``, ``done``; a
:class:`~cardenvs.core.infocode.Named` int that prints as its name and compares equal to it),
``"landlord"`` (seat or -1), ``"bid"``.  ``env.unwrapped.legal_play_features()`` gives the
legal plays with per-play features for (state, action) scorers.

**Hidden information.**  A seat observes its own hand and what is public.  Auction: who bids
first and every seat's pass or bid are public; the 3 kitty cards lie face down (they are among
every seat's ``others``).  Once the landlord is known the kitty is shown to every seat (the
``kitty`` field) and joins his hand.  Play: every play and pass with its seat, the hand sizes
and the doublings are public; the farmers never see each other's hands.  ``render()``,
``history`` and ``get_state()`` show the whole table (for spectators, debugging and search).

**Observation** (relative seats: 0 = the observer, 1 = the next seat 下家, 2 = the one after):

{layout}
"""

from __future__ import annotations

from .core.aec import env_doc, env_function
from .games.doudizhu import obs_layout
from .games.env_ddz import DouDizhuEnv


class raw_env(DouDizhuEnv, game="doudizhu"):
    """The 3-player Dou Dizhu AEC environment (see the module docstring)."""


env = env_function(raw_env)


__doc__ = env_doc(__doc__, obs_layout(3, 15, 4, 6, 20))
