"""A fast heuristic rollout policy for every game, in numba, driven by small declarations.

The policy chooses one legal action of the seat to move from the state vector, reading only
what that seat may know (its own hand, every seat's hand size, every card played, the play
to beat and who made it, the solo seat), so it can play out determinized positions in a
search and also act as an agent.  One implementation serves every game: what differs
between games is data, compiled once per game into an ``int64`` parameter vector by
:func:`policy_params`:

* **the hand plan** (from the play table): which ranks may form straights and pair chains
  and their minimum lengths, whether trios carry kickers, which ranks cannot be played alone
  (Lanxi Wulong's 3s, Da Niangniang's jokers), which rank slots are wild jokers;
* **teams** (from ``game.info.teams``): in a ``"1 vs k"`` game the seat in the ``LANDLORD``
  slot (landlord, digger, 娘娘) plays against the others, who are partners while the solo
  seat still holds cards; otherwise every seat is for himself;
* **the kind of every non-play action block** (:data:`BLOCK_KINDS`, overridable by a game's
  ``policy_blocks`` attribute): bids, a choice scored by the hand it leaves (burying, the
  exchange, joker stand-ins), a fixed preference (first or last id), or an action to avoid
  while anything else is legal (报牌).

Card play (lower scores are better), policy ``"heuristic"`` (:func:`score_actions`): the card
play of the ``rules`` agent (``agents/rules.py``) on a fast plan cost, :func:`hand_cost` with
``full=1`` (greedy straights and pair chains; the rocket and bombs -1, they take a lead back;
a combination of control ranks half; trios carry the lowest non-control singles):

* go out when a legal play empties the hand (报牌 first where it is offered);
* lead the plan's combinations (a play that costs the plan more than itself breaks it), low
  cards first, controls and bombs last; with at most one other combination left, the sure
  winners first (no play of the unseen cards beats them); the lowest single (pair) to a
  partner holding one (two) cards; no single (pair) into an opponent holding one (two);
* follow an opponent with the play that raises the plan cost least, if at most a threshold
  set by how close the opponents are to going out (:data:`FOLLOW_THR_URGENT` ...); a bomb
  (or four of a kind with kickers) only when no plain play does and an opponent is close to
  going out or the bomb nearly finishes the hand; otherwise pass;
* never beat a partner's play unless going out (a loose ally's cheaply, :data:`PP_LOOSE`);
  never a play that leaves a hand able to make no play while anything else is legal.

Policy ``"heuristic0"`` (:func:`score_actions0`), the first heuristic, kept for comparison:
the plan cost with every combination counted 1 (``full=0``), the cheapest play within
:data:`FOLLOW_SLACK`, bombs against an opponent holding :data:`BOMB_ENEMY` cards or fewer.

Speed: the rollout engines (``cardenvs.vector``) call :func:`policy_choose_play` first,
which scores card play (:func:`score_card_play`) from packed action records in the
parameter vector (:data:`PP_RECS`: a row's planes and fields in two words, one cache line
per candidate) without the play table: a numba function that passes the table (a tuple of
some twenty arrays) on to another function increfs and decrefs each of its arrays per call,
which was most of a decision's time.  Hands of at most four cards a rank are costed from
their rank masks alone (:func:`cost_of_masks`).  The other decisions (bids, choices,
``heuristic0``) go through :func:`policy_choose` as before.  :func:`score_actions_reference`
is the card play as first written, column by column of the table; the tests hold both
scorers to the same value at every legal action of thousands of positions of every game.

Bids: the hand's strength (controls, bombs, minus half its plan cost) against quantiles of
the strength of random dealt hands (:func:`bid_thresholds`): the 55%, 75% and 90% quantiles
for bids 1, 2, 3 (:data:`BID_QUANTILES`), or a game's ``policy_bid_quantiles`` (Wakeng: a 3
with the strongest 95%, as the ``rules`` agent's bidding).

Modules, by responsibility (every name stays importable from this one):
:mod:`cardenvs.core.policy_vector` (the parameter vector's layout, the action kinds, the
tuning constants), :mod:`cardenvs.core.policy_plan` (the hand plan's cost kernels),
:mod:`cardenvs.core.policy_score` (the scorers that read the play table: choices,
``heuristic0``, the reference card play), :mod:`cardenvs.core.policy_fast` (the packed action
records and the fast card-play scorer); this one holds the per-decision entry points
(:func:`policy_choose`, :func:`policy_choose_play`, :func:`score_policy`, :func:`pick`) and
the parameters of a game (:func:`policy_params`, :func:`greedy_params`,
:func:`bid_thresholds`, :func:`policy_code`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

import numpy as np
from numba import njit

from .combos import AIRPLANE, BOMB, PAIR_CHAIN, ROCKET, SINGLE, STRAIGHT, TRIO_PAIR, TRIO_SINGLE
from .kernels import rng_below
from .policy_fast import (cost_of_masks_i, is_card_play, masks_of_i, pack_records, score_actions,
                          score_card_play)
from .policy_plan import (cost_after_row, cost_of_masks, hand_after, hand_cost,
                          hand_cost_reference, hand_value, masks_of, strength)
from .policy_score import score_actions0, score_actions_reference, score_choices
from .policy_vector import (ALLY_DELTA, ALLY_ENEMY_MIN, BID_QUANTILES, BLOCK_KINDS, BOMB_ENEMY,
                            BOMB_FINISH, CASH_COST, FOLLOW_SLACK, FOLLOW_THR_FAR, FOLLOW_THR_NEAR,
                            FOLLOW_THR_URGENT, KIND_HEURISTIC, KIND_HEURISTIC0, KIND_NAMES,
                            KIND_RANDOM, K_AVOID, K_BID, K_EVAL_FIRST, K_EVAL_LAST, K_FIRST,
                            K_LAST, K_PASS, K_PLAY, POLICIES, PP_BIDTH, PP_BIDTH1, PP_BOMBN,
                            PP_BONUS, PP_COPIES, PP_CTRL, PP_CTRLFROM, PP_GREEDY, PP_KICK,
                            PP_KINDS, PP_LOOSE, PP_MINP, PP_MINS, PP_NA, PP_NAT, PP_NOSINGLE,
                            PP_NP, PP_PAIRS, PP_PASS, PP_R, PP_RECS, PP_ROCKET, PP_SOLO, PP_STATE,
                            PP_STRAIGHT, PP_T, PP_WILD, REC_BIG, REC_DOUBLES, REC_FAMILY, REC_KEY,
                            REC_KIND, REC_NCARDS, REC_POWER, REC_RSUM, STUCK_COST, URGENT_ENEMY)
from .state import CUR, HDR

if TYPE_CHECKING:
    from .game import Game

@njit(cache=False)
def score_policy(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, kind):
    """The scores of policy ``kind`` (:data:`KIND_HEURISTIC` or :data:`KIND_HEURISTIC0`)."""
    if kind == KIND_HEURISTIC0:
        score_actions0(s, legal, k, tab, opts, pp, k_step, tmp, scores, work)
    else:
        score_actions(s, legal, k, tab, opts, pp, k_step, tmp, scores, work)



@njit(cache=True)
def pick(scores, k, rng, slot, eps):
    """Index of the best score (first on ties); with probability ``eps`` a uniform one."""
    if eps > 0.0:
        u = rng_below(rng, slot, 1 << 30) / float(1 << 30)
        if u < eps:
            return rng_below(rng, slot, k)
    best = 0
    for j in range(1, k):
        if scores[j] < scores[best]:
            best = j
    return best


# inlined twins of the scorer and its neighbours in the rollouts' per-decision entry point
# (see above: the arrays a numba call takes are increfed and decrefed on each call)
_score_card_play_i = njit(inline="always", cache=True)(score_card_play.py_func)
_is_card_play_i = njit(inline="always", cache=True)(is_card_play.py_func)
_pick_i = njit(inline="always", cache=True)(pick.py_func)


@njit(cache=True)
def policy_choose_play(s, legal, k, counts, pp, scores, work, kind, rng, slot, eps):
    """:func:`policy_choose` of the decisions that need no play table: one legal action, the
    random policy, the ``heuristic`` policy's card play (:func:`score_card_play`); -1 for
    the others (``heuristic0``, bids and choices), drawing nothing from ``rng`` then.  The
    rollout engines call it first, and :func:`policy_choose` where it says -1 (a function
    passing the play table on pays for it on every call: see :func:`score_card_play`)."""
    if k == 1:
        return 0
    if kind == KIND_RANDOM:
        return rng_below(rng, slot, k)
    if kind != KIND_HEURISTIC or not _is_card_play_i(legal, k, pp):
        return -1
    _score_card_play_i(s, legal, k, counts, pp, scores, work)
    return _pick_i(scores, k, rng, slot, eps)


@njit(cache=False)
def policy_choose(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, kind, rng, slot, eps):
    """Index into ``legal[:k]`` of the policy's action: ``kind`` 0 heuristic, 1 random,
    2 heuristic0."""
    if k == 1:
        return 0
    if kind == KIND_RANDOM:
        return rng_below(rng, slot, k)
    score_policy(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, kind)
    return pick(scores, k, rng, slot, eps)


# -- the parameters of a game -----------------------------------------------------------------------


def _mask(ranks) -> int:
    m = 0
    for r in ranks:
        m |= 1 << int(r)
    return m


def greedy_mask(game: Game, seats: Iterable[int]) -> int:
    """The :data:`PP_GREEDY` value that makes the card play of ``seats`` (seat indices)
    follow greedily."""
    n = int(game.n_players)
    mask = 0
    for q in seats:
        if isinstance(q, (bool, np.bool_)) or not isinstance(q, (int, np.integer)) \
                or not 0 <= q < n:
            raise ValueError(f"greedy seats must be seat indices 0..{n - 1}, got {q!r}")
        mask |= 1 << int(q)
    return mask


def greedy_params(game: Game, seats: Iterable[int]) -> np.ndarray:
    """A copy of the rollout policy's parameter vector (:func:`policy_params`) in which the
    card play of ``seats`` (seat indices) follows greedily (:data:`PP_GREEDY`)."""
    pp = policy_params(game).copy()
    pp[PP_GREEDY] = greedy_mask(game, seats)
    return pp


def policy_params(game: Game) -> np.ndarray:
    """The rollout policy's ``int64`` parameter vector of a compiled game (cached on it)."""
    pp = getattr(game, "_policy_params", None)
    if pp is not None:
        return pp
    tab = game.tab
    R = int(game.deck.n_ranks)
    T = int(game.pass_id)
    A = int(game.n_actions)
    pp = np.zeros(PP_KINDS + 4 * A, np.int64)
    fam = tab.family
    counts = tab.counts
    wild = tuple(getattr(game, "wild_slots", ()) or
                 (getattr(game, "joker_slots", ()) if hasattr(game, "wild") else ()))
    nat = R - len(wild)

    def ranks_of(f):
        rows = np.flatnonzero(fam == f)
        if rows.size == 0:
            return [], 0
        present = np.flatnonzero(counts[rows, :R].sum(0) > 0)
        return present, int(tab.length[rows].min())

    singles = np.flatnonzero(fam == SINGLE)
    single_ranks = set(np.flatnonzero(counts[singles, :R].sum(0) > 0).tolist())
    st_ranks, st_min = ranks_of(STRAIGHT)
    pc_ranks, pc_min = ranks_of(PAIR_CHAIN)
    pp[PP_R], pp[PP_NAT] = R, nat
    pp[PP_WILD] = _mask(wild)
    pp[PP_NOSINGLE] = _mask(r for r in range(R) if r not in single_ranks)
    pp[PP_STRAIGHT], pp[PP_MINS] = _mask(st_ranks), st_min
    pp[PP_PAIRS], pp[PP_MINP] = _mask(pc_ranks), pc_min
    pp[PP_KICK] = int(bool(((fam == TRIO_SINGLE) | (fam == TRIO_PAIR)).any()))
    pp[PP_SOLO] = int(game.info.teams.startswith("1 vs"))
    pp[PP_LOOSE] = int("loose alliance" in game.info.teams)
    pp[PP_NP] = int(game.n_players)
    pp[PP_PASS] = T
    pp[PP_T] = T
    pp[PP_NA] = A
    pp[PP_STATE] = int(game.state_size)
    chains = np.flatnonzero(np.isin(fam, (STRAIGHT, PAIR_CHAIN, AIRPLANE)))
    chain_ranks = np.flatnonzero(counts[chains, :R].sum(0) > 0) if chains.size else np.zeros(0)
    pp[PP_CTRLFROM] = int(max(chain_ranks)) + 1 if len(chain_ranks) else R
    bombs = [int(counts[t, :R].max()) for t in np.flatnonzero((fam == BOMB) & (tab.power > 0))
             if int((counts[t, :R] > 0).sum()) == 1]
    pp[PP_BOMBN] = min(bombs) if bombs else 99
    rockets = np.flatnonzero(fam == ROCKET)
    if rockets.size and int(counts[rockets[0], :R].max()) == 1:
        pp[PP_ROCKET] = _mask(np.flatnonzero(counts[rockets[0], :R] > 0))
    copies = np.asarray(game.deck.copies, np.int64)
    pp[PP_COPIES:PP_COPIES + len(copies)] = copies
    pp[PP_KINDS + A:PP_KINDS + A + T] = counts[:T, :16] @ np.arange(16, dtype=np.int64)
    # keeping / bidding values: the top three natural ranks and the jokers
    for i, v in enumerate((100, 60, 20)):
        if nat - 1 - i >= 0:
            pp[PP_BONUS + nat - 1 - i] = v
    for r in wild:
        pp[PP_BONUS + r] = 50
    ctrl = [r for r in range(R) if r not in set(st_ranks.tolist() if len(st_ranks) else [])]
    ctrl = [r for r in ctrl if r >= (max(st_ranks) if len(st_ranks) else R - 3)]
    for r in ctrl:
        pp[PP_CTRL + r] = int(100 + 50 * min(2, r - ctrl[0]))
    for r in wild:
        pp[PP_CTRL + r] = 150
    kinds = pp[PP_KINDS:]
    kinds[:T] = K_PLAY
    blocks = dict(BLOCK_KINDS)
    blocks.update(getattr(game, "policy_blocks", {}) or {})
    for name, (a, b) in game.blocks.items():
        if name == "play":
            continue
        if name == "pass":
            kinds[a:b] = K_PASS
            continue
        kd = blocks.get(name)
        if kd is None:
            raise ValueError(f"{game.info.name}: the rollout policy has no kind for the action "
                             f"block {name!r}; give the game a policy_blocks entry "
                             f"(one of {sorted(KIND_NAMES)})")
        kinds[a:b] = KIND_NAMES[kd]
    pp[PP_RECS] = PP_KINDS + 2 * A
    pp[PP_KINDS + 2 * A:] = pack_records(tab, pp[PP_KINDS:PP_KINDS + A],
                                         pp[PP_KINDS + A:PP_KINDS + 2 * A], A).ravel()
    if "bid" in game.blocks:
        pp[PP_BIDTH:PP_BIDTH + 3] = np.round(100 * bid_thresholds(game, pp)).astype(np.int64)
        q = getattr(game, "policy_bid_quantiles", None) or BID_QUANTILES
        pp[PP_BIDTH1:PP_BIDTH1 + 3] = np.round(
            100 * bid_thresholds(game, pp, full=1, quantiles=q)).astype(np.int64)
    setattr(game, "_policy_params", pp)  # the cache (an attribute of no Game class)
    return pp


@njit(cache=False)
def _auction_strengths(k_reset, k_legal, tab, opts, pp, state, buf, n, seed, out, full):
    c = np.zeros(16, np.int64)
    m = 0
    for i in range(n):
        k_reset(state, seed + i, tab, opts)
        seat = state[CUR]
        ho = HDR + 16 * seat
        out[m] = strength(state[ho:ho + 16], pp, c, full)
        m += 1
    return m


def bid_thresholds(game, pp: np.ndarray, n: int = 4000, seed: int = 12345, full: int = 0,
                   quantiles=BID_QUANTILES) -> np.ndarray:
    """Strength quantiles (``quantiles``, default :data:`BID_QUANTILES`; one above 1 means
    "never": a threshold no hand reaches) of the first bidder's hand in ``n`` random deals of
    ``game`` (fixed seed); ``full`` as in :func:`strength`."""
    state = game.new_state()
    buf = np.zeros(game.n_actions + 1, np.int64)
    out = np.zeros(n, np.float64)
    from .specialize import run as run_specialized

    m = run_specialized(_auction_strengths, game, f"the bid thresholds of {game.info.name}",
                        game.k_reset, game.k_legal, game.tab, game.opts, pp, state, buf,
                        np.int64(n), np.int64(seed), out, np.int64(full))
    return np.array([np.quantile(out[:m], q) if q <= 1 else 1e6 for q in quantiles])


def policy_code(policy: str) -> int:
    """The kernel's code of a policy name (:data:`POLICIES`)."""
    if not isinstance(policy, str):
        raise TypeError(f"policy must be a string, got {type(policy).__name__}")
    if policy not in POLICIES:
        raise ValueError(f"unknown rollout policy {policy!r}; choose from {', '.join(POLICIES)}")
    return POLICIES.index(policy)
