"""挖坑 Wakeng, 3 players, 52 cards: ``wakeng_v0``.

``from cardenvs import wakeng_v0; env = wakeng_v0.env(**options)`` or, once ``cardenvs`` is
imported, ``pettingzoo.make("aec", "cardenvs/wakeng-v0")``.

| | |
| --- | --- |
| agents | ``player_0``, ``player_1``, ``player_2`` (seats; the digger 坑主 is chosen by the auction) |
| action space | ``Discrete(N)``, N = 185 with the default options (153 plays + pass + 3 bids + 26 bury picks + 2 open choices) |
| observation | ``{"observation": Box(0, 1, (875,), float32), "action_mask": Box(0, 1, (N,), int8)}`` |
| rewards | terminal, to every seat: the score (digger +-2 unit, farmers -+unit) or +-1 |
| rules | ``docs/rules/wakeng.md``; variants in :mod:`cardenvs.games.wakeng` |

**Rules variant.** Ranks 4 < 5 < ... < A < 2 < 3; 16 cards each, a kitty of 4.  The holder of
♠3 bids first (♠4, ♠5, ... ♠A, ♠2 if ♠3 is in the kitty).  One round of bidding in turn
order: each seat passes or bids strictly higher (1..3); a 3 ends it; if all pass the first
bidder digs at 1.  The digger takes the kitty and buries 4 cards, one pick per turn; the
holder of ♦3 then leads (♦4, ♦5, ... ♦A, ♦2 if ♦3 is buried), who may be a farmer.  Plays:
single, pair, trio, straight (>= 5 within 4..A), pair chain (>= 3 pairs within 4..A),
airplane (>= 2 trios within 4..A), bomb (four of a kind; 3333 highest); no kickers.  The first
player out wins for his side.  unit = bid x 2^bombs x (2 if open) x 2^floor(max(n, 8) / 8),
n = cards held by the losing side.  Decisions where the rules page is silent are listed in
:mod:`cardenvs.games.wakeng`.

**Options** (keywords of ``env()``): ``bombs=True``, ``min_straight=5`` (3..11),
``min_pair_chain=3`` (2..8), ``min_airplane=2`` (2..5),
``first_bidder="S3"|"lowest_heart"|"lowest_club"``, ``open_hand=False``,
``reveal_kitty=False``, ``reward="score"|"win_loss"``, ``illegal="lose"|"raise"``,
``illegal_reward=-1``, ``render_mode=None|"ansi"|"human"|"rgb_array"``.  The minimum chain
lengths change the play table and so ``N``.

**Action blocks** (``env.unwrapped.game.blocks``, default options):

| block | ids | strings | used |
| --- | --- | --- | --- |
| ``play`` | 0..152 | cards, e.g. ``"44"``, ``"TJQKA"``, ``"555666"``, ``"3333"`` | play phase |
| ``pass`` | 153 | ``"pass"`` | auction (不叫) and following |
| ``bid`` | 154..156 | ``"bid 1"`` .. ``"bid 3"`` | auction |
| ``bury`` | 157..182 | ``"bury 4"`` .. ``"bury 3"`` (a card of that rank that is not the diamond), then ``"bury D4"`` .. ``"bury D3"`` (the diamond) | digger, 4 turns in a row |
| ``open`` | 183, 184 | ``"not open"``, ``"open"`` | a player who bid 3, with ``open_hand=True`` |

Burying picks name the rank, and the diamond apart, because after the auction a card's suit
matters only for the ♦ first-lead rule: ``bury 7`` buries a 7 other than ♦7 (which of ♠7, ♥7,
♣7 is never observable, so it is not tracked), ``bury D7`` the ♦7.  On a free lead the legal actions are plays only; against a
play, the beating plays and ``pass``.  ``env.unwrapped.action_to_string(a)`` /
``string_to_action(s)`` round-trip.

**Custom deals** (rules README, convention 8): ``env.reset(options={"hands": [h0, h1, h2],
"kitty": k})`` with suited cards, e.g. ``"S3 H3 D4 ..."`` (16 cards a hand, 4 in the kitty;
the kitty defaults to the rest of the deck): the suits decide the first bidder and the first
leader.  Or unsuited hands (``"3334445..."``) plus the seats the suits would decide:
``first_bidder`` and ``leader`` (the seat that leads after the burying).  ``digger`` and
``bid`` together skip the auction (with a bid of 3 and ``open_hand=True`` the digger still
decides open or not).  An impossible or incomplete deal is a ``ValueError`` that says what is
wrong, and leaves the current game untouched.

**Info** (fixed-shape; the legal ids are ``env.unwrapped.legal_actions()``, and with
``info_legal_actions=True`` also ``infos[agent]["legal_actions"]``; every entry is numeric):
``"phase"`` (its index in ``raw_env.PHASES``: ``auction``, ``play``, ``done``, ``open``,
``bury``; a :class:`~cardenvs.core.infocode.Named` int that prints as its name and compares
equal to it), ``"digger"`` (seat or -1), ``"bid"``, ``"open"``
(-1 undecided, 0, 1), ``"first_bidder"``, ``"leader"`` (the first leader, -1 before the play).

**Hidden information.**  Deal: a seat observes its own 16 cards and which of them are
diamonds.  Auction: the first bidder and every pass and bid are public.  Open decision
(``open_hand=True``): public; when open, the digger's 16 dealt cards are in every seat's
observation for the rest of the deal (not the kitty, not the buried cards).  Kitty: seen by the
digger once he takes it; the farmers never see it (with ``reveal_kitty=True`` everyone sees it
once taken).  Burying: only the digger sees what he buries; the farmers see how many cards are
buried and his hand size, the picks are not in ``recent`` and the buried cards stay among their
``others``.  First lead and play: the leader, every play and pass, the hand sizes and bombs are
public; the farmers never see each other's hands.  ``render()``, ``history`` and
``get_state()`` show the whole table.

**Observation** (relative seats: 0 = the observer, 1 = the next seat 下家, 2 = the one after;
card fields are 13 ranks x 4 planes, rank 0 = ``4`` ... rank 12 = ``3``):

{layout}
"""

from __future__ import annotations

from .core.aec import CardEnv, env_doc, env_function
from .core.state import BID, FIRST, LANDLORD
from .games.wakeng import A_LEADER, A_OPEN, PHASE_NAMES, obs_layout


class raw_env(CardEnv, game="wakeng"):
    """The Wakeng AEC environment (see the module docstring)."""

    PHASES = PHASE_NAMES

    def _extra_info(self, info: dict) -> None:
        s = self.state_vec
        info["phase"] = self.phase()
        info["digger"] = int(s[LANDLORD])
        info["bid"] = int(s[BID])
        info["open"] = int(s[A_OPEN])
        info["first_bidder"] = int(s[FIRST])
        info["leader"] = int(s[A_LEADER])


env = env_function(raw_env)


__doc__ = env_doc(__doc__, obs_layout())
