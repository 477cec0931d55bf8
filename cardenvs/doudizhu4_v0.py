"""四人斗地主 Dou Dizhu for 4 players (two decks): ``doudizhu4_v0``.

``from cardenvs import doudizhu4_v0; env = doudizhu4_v0.env(**options)`` or, once ``cardenvs``
is imported, ``pettingzoo.make("aec", "cardenvs/doudizhu4-v0")``.

| | |
| --- | --- |
| agents | ``player_0`` .. ``player_3`` (seats; the landlord is chosen by the auction) |
| action space | ``Discrete(N)``, N = 7,955 (7,951 plays + pass + 3 bids; see blocks below) |
| observation | ``{"observation": Box(0, 1, (D,), float32), "action_mask": Box(0, 1, (N,), int8)}``, D = 2,019 |
| rewards | terminal, to every seat: the score (landlord +-3 stake, farmers -+stake) or +-1 |
| rules | ``docs/rules/doudizhu.md``, section "4 players"; kernels in :mod:`cardenvs.games.doudizhu` |

**Rules in short.** 108 cards (two packs, jokers ``BB RR``); 25 cards to each seat and an
8-card kitty, face down.  Auction over the four seats: pass or bid 1/2/3 strictly above the
current bid, re-entry allowed; it ends at a bid of 3 or after three passes in a row following
a bid; four passes before any bid void the deal (reward 0 to all; ``all_pass="redeal"`` deals
again).  The landlord takes all 8 kitty cards (33 in hand), which the farmers never see, and
leads.  The deal ends when anyone goes out: landlord first -> landlord wins, otherwise the
three farmers win.  Combinations are those of the 3-player game except: no trio + single, no
airplane + singles, no four + two; ``BB`` and ``RR`` are pairs above ``22`` (``RR`` highest,
``BR`` is no pair, three jokers are no combination) and may be carried as the pair of a
trio + pair or an airplane + pairs, but never together; bombs are 4 to 8 cards of one rank,
more cards beat fewer whatever the rank, equal size -> higher rank; the rocket ``BBRR`` beats
everything.  Chains stay within 3..A (straight 5..12, pair chain 3..12 pairs, airplane 2..11
trios, airplane + pairs 2..6 trios).  Scoring: stake = bid x 2^(rockets + bombs of >= 6 cards)
(4- and 5-card bombs do not double); landlord wins: +3 stake to him, -stake to each farmer;
landlord loses: the reverse.

**Options** (keywords of ``env()``): ``auction="bid"|"fixed"`` (fixed: seat 0 is landlord at
bid 1), ``all_pass="void"|"redeal"``, ``max_redeals=3``, ``spring=False`` (x2 for 春天 / 反春,
as for 3 players), ``reward="score"|"win_loss"``, ``illegal="lose"|"raise"``,
``illegal_reward=-1``, ``render_mode=None|"ansi"|"human"|"rgb_array"``.  ``preset`` accepts only
``"seed"`` (DouZero and RLCard have no 4-player game).

**Action blocks** (``env.unwrapped.game.blocks``):

| block | ids | meaning |
| --- | --- | --- |
| ``play`` | ``[0, 7951)`` | one id per play (cards + reading), sorted by type, length, rank |
| ``pass`` | ``7951`` | pass, in the auction and in play |
| ``bid`` | ``7952..7954`` | bid 1, 2, 3 |

Play ids by family: single 15, pair 15 (``33`` .. ``22``, ``BB``, ``RR``), trio 13,
trio + pair 182 (13 trios x 14 pair ranks), straight 36, pair chain 55, airplane 65,
airplane + pairs 7,504, bomb 65 (5 sizes x 13 ranks), rocket 1.

*How N stays small with two decks.*  The play table holds only *effective* plays: a play is
its cards plus one reading, and cards a hand cannot usefully tell apart (the two copies of a
card) are never distinguished.  The only families with kicker variants are trio + pair and
airplane + pairs, whose kickers are pairs of distinct ranks outside the trios (and never
``BB`` with ``RR``), so a k-trio airplane has C(15-k, k) - C(13-k, k-2) kicker sets; there are
no single kickers (the trio + single, airplane + singles and four + two families, which make
up 24,954 of the 3-player game's 28,237 plays, do not exist here).  Bombs of every size are one
row per (size, rank).  No two rows share the same cards, so ``action_to_string`` writes plain
card strings (kickers after a ``+``: ``"333444+5566"``) and every card string names one action.

Against a play, legal actions are the beating plays and ``pass``; on a free lead, plays only.
``env.unwrapped.action_to_string(a)`` / ``string_to_action(s)`` round-trip.

**Custom deals**: ``env.reset(options={"hands": [h0, h1, h2, h3], "kitty": k, "landlord": 0,
"bid": 2})``: four 25-card hands and an 8-card kitty (if ``kitty`` is left out it is the rest
of the two packs); no card more than 8 times (jokers: 2).  ``landlord`` and ``bid`` together
skip the auction; ``first_bidder`` fixes who bids first (otherwise it is drawn from the seed).
An impossible deal is a ``ValueError`` naming the problem and leaves the current game
untouched.

**Info** (fixed-shape; the legal ids are ``env.unwrapped.legal_actions()``, and with
``info_legal_actions=True`` also ``infos[agent]["legal_actions"]``; every entry is numeric):
``"phase"`` (its index in ``raw_env.PHASES``: ``auction``, ``play``, ``done``; a
:class:`~cardenvs.core.infocode.Named` int that prints as its name and compares equal to it),
``"landlord"`` (seat or -1), ``"bid"``.  ``env.unwrapped.legal_play_features()`` gives the
legal plays with per-play features for (state, action) scorers.

**Hidden information.**  A seat observes its own hand and what is public.  Auction: who bids
first and every seat's pass or bid are public; the 8 kitty cards lie face down.  After the
auction only the landlord sees the kitty (``kitty`` field); the farmers see zeros there, keep
those cards among their ``others`` and know only that the landlord holds 33 cards.  Play: every
play and pass with its seat, the hand sizes and the doublings are public; the farmers never see
each other's hands.  ``render()``, ``history`` and ``get_state()`` show the whole table.

**Observation** (15 ranks x 8 "at least k copies" planes per card set; relative seats:
0 = the observer, 1 = the next seat 下家, 2, 3).  The ``kitty`` field is filled for the
landlord only, once the auction is over; farmers see zeros there (the kitty is private):

{layout}
"""

from __future__ import annotations

from .core.aec import env_doc, env_function
from .games.doudizhu import obs_layout
from .games.env_ddz import DouDizhuEnv


class raw_env(DouDizhuEnv, game="doudizhu4"):
    """The 4-player, two-deck Dou Dizhu AEC environment (see the module docstring)."""


env = env_function(raw_env)


__doc__ = env_doc(__doc__, obs_layout(4, 15, 8, 8, 33))
