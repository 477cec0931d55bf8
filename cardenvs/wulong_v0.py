"""兰溪乌龙 Lanxi Wulong, 4 players, 108 cards, wild jokers and 报牌: ``wulong_v0``.

``from cardenvs import wulong_v0; env = wulong_v0.env(**options)`` or, once ``cardenvs`` is
imported, ``pettingzoo.make("aec", "cardenvs/wulong-v0")``.

| | |
| --- | --- |
| agents | ``player_0`` .. ``player_3`` (seats; every player for himself) |
| action space | ``Discrete(N)``, N = 6,068 with the default options (6,039 plays + pass + declare + 27 joker picks) |
| observation | ``{"observation": Box(0, 1, (3015,), float32), "action_mask": Box(0, 1, (N,), int8)}`` |
| rewards | terminal, to every seat: the score (zero-sum, stake 1) or its sign (``reward="win_loss"``) |
| rules | ``docs/rules/wulong.md``; decisions and variants in :mod:`cardenvs.games.wulong` |

**Rules in short.** Two decks (108 cards, jokers ``BB RR``), 25 cards to each seat, 8 never
used.  Singles: ``R`` > ``B`` > 2 > A > ... > 3.  The jokers are wild: played with at least one
natural card a joker stands for any natural rank the combination needs (``R[2]222`` is the
bomb ``2222``); they are also themselves (singles, the pairs ``BB`` / ``RR``, a carried pair,
``BBRR`` above every bomb).  3s only inside chains (``34567``, ``334455``, ``333444``); a
player left with only 3s has failed.  Combinations: single, pair, trio, trio + pair, straight
(>= 5 within 3..A), pair chain (>= 3 pairs), trio chain (>= 2 trios) alone or with as many
pairs, bombs of 4..12 cards (size, then rank), ``BBRR``.  The first seat after a random
dealer holding ♠3 leads (then ♣3, ♥3, ♦3, ♠4, ...).  报牌: with 10 or fewer cards, at the
start of his turn and while nobody is out, a player may declare: his hand is shown to all and
every play of his must contain his top card.  The first out is the 头家; every declarer who is
not the 头家 pays him 2, otherwise the 末家 (the earliest player failed with only 3s, else the
last active player) pays 1, or 2 when the 头家 had declared.

**Options** (keywords of ``env()``): ``wild_jokers="both"|"big_only"|"none"``,
``joker_order="big_over_small"|"first_played"``, ``first_lead="S3"|"C3"``,
``declare_must_include="seed"|"one"|"all"``, ``play_to_completion=False``,
``reward="score"|"win_loss"``, ``illegal="lose"|"raise"``, ``illegal_reward=-1``,
``render_mode=None|"ansi"|"human"|"rgb_array"``.  ``wild_jokers`` changes the play table and so
``N``: ``"both"`` 6,039 rows, N = 6,068; ``"big_only"`` 6,015 rows, N = 6,031; ``"none"`` 5,991 rows,
N = 5,993.

**Action blocks** (``env.unwrapped.game.blocks``, default options):

| block | ids | strings | used |
| --- | --- | --- | --- |
| ``play`` | 0..6038 | effective cards, e.g. ``"44"``, ``"34567"``, ``"444+RR"``, ``"333444+5566"``, ``"44444"`` | choosing a play |
| ``pass`` | 6039 | ``"pass"`` | following |
| ``declare`` | 6040 | ``"declare"`` (报牌) | start of one's turn, <= 10 cards, nobody out yet |
| ``pick`` | 6041..6067 | ``"B[3]"`` .. ``"B[2]"``, ``"R[3]"`` .. ``"R[2]"``, ``"done"`` | the same seat, right after a play with several realisations |

*How N stays small.*  A play row is an *effective* play: its cards with every joker counted as
the rank it stands for, plus jokers that are themselves (``444+RR`` is a trio + pair of big
jokers; ``44444`` may be made as ``444R[4]R[4]``).  Which physical cards make the row (which
natural cards are replaced by jokers, small or big) is a *realisation*; when a hand has
several for the chosen row, the same seat resolves it with pick actions: ``B[r]`` / ``R[r]``
("a small / big joker stands for a card of rank r"), in canonical order (ranks ascending, small
jokers first), then ``done``.  Only picks that complete to a realisation are legal, forced
steps are applied without asking, and a row with one realisation is played at once.  Two
realisations that differ only in which joker labels which stood-for card are one (the small
jokers take the lowest ranks), because the hand left and the play's strength are the same.
For a declared player (报牌) only realisations holding his top card are offered, which can
force a joker into a play.

**Rules queries**: ``cardenvs.legal_moves("wulong", hand, prev)`` lists every realisation of
every legal play, a joker standing for rank X written as the joker followed by ``[X]``
(``legal_moves("wulong", "4567R") == ["4", "5", "6", "7", "R", "4R[4]", "5R[5]", "6R[6]",
"7R[7]", "R[3]4567", "4567R[8]"]``); ``plain=True`` lists the effective plays instead
(``"34567"``, ``"45678"``), ``declared=True`` applies the 报牌 top-card rule.  ``prev`` may be
written either way (``"R[2]222"`` is ``"2222"``).

**Custom deals** (rules README, convention 8): ``env.reset(options={"hands": [h0, h1, h2,
h3]})`` with 25 cards a hand; the 8 unused cards are the rest of the two decks.  Suited hands
(``"S3 H3 D4 ... B R"``; jokers without a suit; each suited card at most twice in all) decide
the first leader going round from the seat after ``dealer`` (given, or drawn from the seed).
Unsuited hands (``"3344..."``) need ``leader``, the seat the suits would name.  Impossible or
incomplete deals are a ``ValueError`` that says what is wrong, and leave the current game
untouched.  ``env.unwrapped.game.set_position(state, hands, to_move, prev=..., declared=...)``
builds mid-game positions for analysis.

**Info** (fixed-shape; the legal ids are ``env.unwrapped.legal_actions()``, and with
``info_legal_actions=True`` also ``infos[agent]["legal_actions"]``; every entry is numeric):
``"phase"`` (its index in ``raw_env.PHASES``: ``deal``, ``play``, ``done``, ``wilds`` while
picking jokers), ``"dealer"``, ``"leader"`` (first lead), ``"declared"`` (per seat: whether it
declared 报牌), ``"status"`` (per seat, its index in ``raw_env.STATUSES``: ``active``,
``out``, ``failed``), ``"head"`` (头家 or -1), ``"loser"`` (末家 once fixed, or -1),
``"to_beat"`` (the play table row of the play to beat, -1 on a free lead; its name is the
play with its jokers, e.g. ``"45R[6]78"``, or ``""``), ``"ranking"`` (seats, best first, by
the current status).  The categorical entries are
:class:`~cardenvs.core.infocode.Named` ints: they print as their names and compare equal to
them (``info["phase"] == "play"``).

**Hidden information.**  Deal: a seat observes its own 25 cards; the 8 unused cards are seen by
no one (they stay among every seat's ``others``); the dealer and the first leader are public.
Play: every play with its physical cards and what each joker stood for, every pass and the hand
sizes are public.  Joker picks: only the mover sees the play he is completing and his picks so
far (``pending``, the ``wilds`` phase); every other seat observes the position as it was before
he chose the play, until it is made and public.  报牌: a
declaration is public and, from then on, the declarer's current hand is in every seat's
observation (``declared_hands``).  Failed seats are public (their hands hold only 3s).  Nobody
has a partner: a hand is hidden from the three other seats until its player declares.
``render()``, ``history`` and ``get_state()`` show the whole table.

**Observation** (15 ranks x 8 "at least k copies" planes per card set; relative seats:
0 = the observer, 1 = the next seat 下家, 2, 3).  Played cards with their joker assignments,
declarations, declared hands and failed players are public; the 8 unused cards are seen by no
one (they are part of ``others``):

{layout}
"""

from __future__ import annotations

from typing import cast

from .core.aec import CardEnv, env_doc, env_function
from .core.infocode import Named, named_codes
from .core.state import LAST_ROW, WINNER
from .games.wulong import (
    A_DEALER, A_LEADER, A_LOSER, PHASE_NAMES, STATUS_NAMES, X_STATUS, Wulong, obs_layout,
)


class raw_env(CardEnv, game="wulong"):
    """The Lanxi Wulong AEC environment (see the module docstring)."""

    PHASES = PHASE_NAMES
    #: the names of the values of ``info["status"]``'s entries
    STATUSES = STATUS_NAMES
    _status_codes = named_codes(STATUS_NAMES)

    def _extra_info(self, info: dict) -> None:
        s = self.state_vec
        g = cast(Wulong, self.game)
        info["phase"] = self.phase()
        info["dealer"] = int(s[A_DEALER])
        info["leader"] = int(s[A_LEADER])
        info["declared"] = [bool(q in g.declared(s)) for q in range(g.n_players)]
        info["status"] = [self._status_codes[int(s[X_STATUS + q])] for q in range(g.n_players)]
        info["head"] = int(s[WINNER])
        info["loser"] = int(s[A_LOSER])
        row = -1 if g.done(s) else int(s[LAST_ROW])
        info["to_beat"] = Named(row, "" if row < 0 else g.play_string(s))
        info["ranking"] = g.ranking(s)


env = env_function(raw_env)


__doc__ = env_doc(__doc__, obs_layout())
