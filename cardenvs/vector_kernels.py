"""The numba engine of :class:`cardenvs.vector.VectorGame`: :func:`_engine` (reset, step,
random steps, the learner's advance), :func:`_load_engine` (slots loaded from state vectors),
:func:`_rollout_engine` and :func:`_agent_moves` (rollouts to the end of the game), and the
layout of the arrays they share with the class (operations ``OP_*``, the config vector
``C_*``, the per-slot rows ``IV_*``, the error vector ``E_*`` / ``ERR_*``).

Each function takes a game's kernels as parameters (``k_*``), so one code serves every game;
numba cannot cache a function with dispatcher arguments, so :mod:`cardenvs.core.specialize`
generates one copy of each per game's kernel set with the kernels bound as globals, compiled
with ``cache=True``; :class:`cardenvs.vector.VectorGame` calls those copies.
"""

from __future__ import annotations

from numba import njit

from .core.compact import first_decisions
from .core.kernels import rng_below
from .core.policy import policy_choose, policy_choose_play
from .core.state import CUR, PHASE, P_DONE, REW0

#: decisions in a row without reaching a learner seat before a slot is declared stuck
MAX_DECISIONS = 100_000

# operations of the engine kernel
OP_RESET, OP_STEP, OP_RANDOM_STEP, OP_ADVANCE, OP_RANDOM_ACTIONS, OP_STEP_LEGAL = range(6)

# config vector (int64) handed to the kernel; the learner flags per seat follow N_CONFIG
(C_OBSERVE, C_MASKS, C_AUTO_RESET, C_KEEP_FINAL, C_K, C_NP, C_NA, C_LOSE, C_SEEDBUF,
 C_CMARKS) = range(10)
N_CONFIG = 10

# rows of the per-slot int64 array (public ones are exposed as row views)
(IV_NLEGAL, IV_SEAT, IV_PTR, IV_DEALS, IV_RNG, IV_VIEW, IV_LSTEPS, IV_FLEN) = range(8)
N_IV = 8

# error / report vector (int64) filled by the kernel
(E_CODE, E_SLOT, E_ACTION, E_COUNT, E_REFILL, E_SKIPPED) = range(6)
N_ERR = 6
ERR_NONE, ERR_RANGE, ERR_ILLEGAL, ERR_OVER_K, ERR_NO_LEGAL, ERR_STUCK, ERR_FINISHED = range(7)


# --------------------------------------------------------------------------------------------
# the kernel: one numba function for every operation, specialised per game's kernel set
# --------------------------------------------------------------------------------------------


# how _transition changes a slot
T_STEP, T_ILLEGAL, T_DEAL = 0, 1, 2


@njit
def _engine(op, clear, k_reset, k_legal, k_is_legal, k_step, k_encode, tab, opts, offsets,
            states, slots, actions, seed_buf, iv, legal, obs, masks, rewards, done, final_states,
            final_obs, fv, fpar, bad, scratch, cfg, err, cfirst, cmark, clegal, cn_legal):
    """Run operation ``op`` on the slots ``slots`` (see the ``OP_*`` constants); returns 1
    when ``err`` needs a look (an error, deal seeds to refill, skipped deals), else 0.

    * ``OP_RESET``: start each slot's next deal;
    * ``OP_STEP``: apply ``actions[j]`` to slot ``slots[j]`` (every action is checked first;
      nothing changes when one is bad);
    * ``OP_RANDOM_STEP``: draw a uniform legal action per slot into ``actions`` and apply it;
    * ``OP_ADVANCE``: play uniform legal actions for every seat with ``learner[seat] == 0``
      until a learner seat is to move (finished games restart);
    * ``OP_RANDOM_ACTIONS``: only draw the actions;
    * ``OP_STEP_LEGAL``: ``OP_STEP`` without the checks, for a caller whose actions are legal
      ids of their slots' seats to move, read from ``legal`` (the compact batch,
      :mod:`cardenvs.compact_vector`: its completed plays).

    Arrays: ``iv`` holds the per-slot integers (rows ``IV_*``), ``fv`` the learner's pay
    (``acc``: this cycle's, ``carry``: pay after a game ended within the cycle), ``fpar`` the
    learner weight of each seat then ``illegal_reward``, ``cfg`` the configuration then the
    learner flag of each seat.  A compact batch (:mod:`cardenvs.compact_vector`) hands in its
    codec's ``first`` map as ``cfirst`` (else an empty array): every slot the call moves then
    also gets its compact first decisions in ``clegal`` / ``cn_legal`` (and ``cmark`` with
    ``cfg[C_CMARKS]``; :func:`cardenvs.core.compact.first_decisions`), computed while its flat
    legal ids are at hand.  ``clear`` clears ``rewards``, ``done``, ``acc`` and ``carry``
    of every slot first.  With ``cfg[C_LOSE]``, an illegal action of a learner seat ends its
    game instead of raising: the learner is paid ``illegal_reward``.
    """
    n_slots = slots.shape[0]
    n_legal = iv[IV_NLEGAL]
    seat = iv[IV_SEAT]
    seed_ptr = iv[IV_PTR]
    deals = iv[IV_DEALS]
    rng = iv[IV_RNG]
    view_seat = iv[IV_VIEW]
    lsteps = iv[IV_LSTEPS]
    final_len = iv[IV_FLEN]
    acc = fv[0]
    carry = fv[1]
    n_players = cfg[C_NP]
    learner = cfg[N_CONFIG:N_CONFIG + n_players]
    weights = fpar[:n_players]
    illegal_reward = fpar[n_players]
    for q in range(err.shape[0]):
        err[q] = 0
    if op == OP_STEP:
        for j in range(n_slots):  # check everything before changing anything
            i = slots[j]
            a = actions[j]
            bad[j] = False
            code = ERR_NONE
            if states[i, PHASE] == P_DONE:
                code = ERR_FINISHED
            elif a < 0 or a >= cfg[C_NA]:
                code = ERR_RANGE
            elif not k_is_legal(states[i], a, tab, opts):
                code = ERR_ILLEGAL
            if code == ERR_RANGE or code == ERR_ILLEGAL:
                if cfg[C_LOSE] == 1 and learner[states[i, CUR]] == 1:
                    bad[j] = True
                    code = ERR_NONE
            if code != ERR_NONE:
                err[E_CODE] = code
                err[E_SLOT] = i
                err[E_ACTION] = a
                return 1
    if op == OP_RANDOM_STEP:  # every slot must have a move before any moves
        for j in range(n_slots):
            if n_legal[slots[j]] <= 0:
                err[E_CODE] = ERR_FINISHED
                err[E_SLOT] = slots[j]
                return 1
    if clear == 1:  # after the checks: a rejected call leaves the last call's outputs
        for i in range(done.shape[0]):
            for p in range(cfg[C_NP]):
                rewards[i, p] = 0.0
            done[i] = False
            acc[i] = 0.0
            carry[i] = 0.0
    for j in range(n_slots):
        i = slots[j]
        if op == OP_RANDOM_ACTIONS:
            k = n_legal[i]
            actions[j] = legal[i, rng_below(rng, i, k)] if k > 0 else -1
            continue
        if cfg[C_MASKS] == 1:  # unset the mask bits of the ids the slot showed
            for q in range(n_legal[i]):
                masks[i, legal[i, q]] = 0
        moves = 0
        while True:
            kind = T_STEP
            if op == OP_RESET:
                if moves > 0:
                    break
                kind = T_DEAL
                a = -1
            elif op == OP_STEP or op == OP_STEP_LEGAL:
                if moves > 0:
                    break
                a = actions[j]
                if op == OP_STEP and bad[j]:
                    kind = T_ILLEGAL
            elif op == OP_RANDOM_STEP:
                if moves > 0:
                    break
                if n_legal[i] <= 0:
                    err[E_CODE] = ERR_FINISHED
                    err[E_SLOT] = i
                    return 1
                a = legal[i, rng_below(rng, i, n_legal[i])]
                actions[j] = a
            else:  # OP_ADVANCE
                if seat[i] < 0 or learner[seat[i]] == 1:
                    break
                if moves > MAX_DECISIONS:
                    err[E_CODE] = ERR_STUCK
                    err[E_SLOT] = i
                    return 1
                a = legal[i, rng_below(rng, i, n_legal[i])]
            # -- the transition (written out here: one call site per kernel) --
            s = states[i]
            finished = False
            if kind == T_DEAL:
                for p in range(cfg[C_NP]):
                    rewards[i, p] = 0.0
                done[i] = False
                lsteps[i] = 0
                view_seat[i] = -1
            else:
                mover = s[CUR]
                if learner[mover] == 1:
                    view_seat[i] = mover
                    lsteps[i] += 1
                r = 0.0
                if kind == T_ILLEGAL:
                    r = illegal_reward
                else:
                    k_step(s, a, tab, opts)
                    for p in range(cfg[C_NP]):
                        v = s[REW0 + p]
                        rewards[i, p] += v
                        r += weights[p] * v
                if done[i]:
                    carry[i] += r
                else:
                    acc[i] += r
                if kind == T_ILLEGAL or s[PHASE] == P_DONE:
                    finished = True
                    if not done[i]:
                        done[i] = True
                        final_len[i] = lsteps[i]
                        if cfg[C_KEEP_FINAL] == 1:
                            for q in range(s.shape[0]):
                                final_states[i, q] = s[q]
                            if cfg[C_OBSERVE] == 1:
                                vs = view_seat[i] if view_seat[i] >= 0 else mover
                                k_encode(s, vs, tab, opts, offsets, final_obs[i])
                    else:
                        # a second deal ended in one learner cycle (the learner never moved in it)
                        carry[i] = 0.0
                        err[E_SKIPPED] += 1
                    lsteps[i] = 0
                    view_seat[i] = -1
            if kind == T_DEAL or (finished and (cfg[C_AUTO_RESET] == 1 or kind == T_ILLEGAL)):
                p = seed_ptr[i]
                if p >= cfg[C_SEEDBUF]:  # SEED_BUFFER // 2 deals in one call: stuck
                    err[E_CODE] = ERR_STUCK
                    err[E_SLOT] = i
                    return 1
                k_reset(s, seed_buf[i, p], tab, opts)
                seed_ptr[i] = p + 1
                deals[i] += 1
                if p + 1 >= cfg[C_SEEDBUF] // 2:
                    err[E_REFILL] += 1
            # the legal ids of the seat to move
            k = 0
            if s[PHASE] == P_DONE:
                seat[i] = -1
            else:
                k = k_legal(s, tab, opts, scratch)
                if k > cfg[C_K]:
                    err[E_CODE] = ERR_OVER_K
                    err[E_SLOT] = i
                    err[E_COUNT] = k
                    return 1
                if k <= 0:
                    err[E_CODE] = ERR_NO_LEGAL
                    err[E_SLOT] = i
                    return 1
                seat[i] = s[CUR]
                for q in range(k):
                    legal[i, q] = scratch[q]
            for q in range(k, n_legal[i]):
                legal[i, q] = -1
            n_legal[i] = k
            moves += 1
        # where the call leaves the slot: observation and mask of the seat to move
        if cfg[C_OBSERVE] == 1:
            if seat[i] >= 0:
                k_encode(states[i], seat[i], tab, opts, offsets, obs[i])
            else:
                for d in range(obs.shape[1]):
                    obs[i, d] = 0.0
        if cfg[C_MASKS] == 1:
            for q in range(n_legal[i]):
                masks[i, legal[i, q]] = 1
        if cfirst.shape[0] > 0:
            first_decisions(i, legal, n_legal, cfirst, cfg[C_CMARKS] == 1, cmark, clegal,
                            cn_legal)
    return 1 if err[E_REFILL] > 0 or err[E_SKIPPED] > 0 else 0


# --------------------------------------------------------------------------------------------
# loaded positions and rollouts (siblings of _engine over the same kernel set)
# --------------------------------------------------------------------------------------------


@njit(nogil=True)  # no Python objects: threads (the web app's sessions) run it at once
def _load_engine(k_legal, k_encode, tab, opts, offsets, states, slots, iv, legal, obs, masks,
                 rewards, done, scratch, cfg, err):
    """Recompute what the engine derives from ``states[i]`` for each slot ``i`` of ``slots``:
    seat to move, legal ids and their count, observation, mask; zero its rewards and done
    flag.  Returns 1 with ``err`` filled on an over-``K`` or no-legal slot, else 0.

    The legal-ids and view lines repeat :func:`_engine`'s on purpose: moved into a shared
    ``@njit`` helper they made ``step_random`` 1.5-3x slower (doudizhu, wakeng, wulong; 512
    slots, 2026-12-04; the cause was not isolated, likely the per-call reference counting of
    the array arguments)."""
    n_legal = iv[IV_NLEGAL]
    seat = iv[IV_SEAT]
    for q in range(err.shape[0]):
        err[q] = 0
    for j in range(slots.shape[0]):
        i = slots[j]
        s = states[i]
        if cfg[C_MASKS] == 1:
            for q in range(n_legal[i]):
                masks[i, legal[i, q]] = 0
        for p in range(cfg[C_NP]):
            rewards[i, p] = 0.0
        done[i] = False
        iv[IV_LSTEPS, i] = 0
        iv[IV_VIEW, i] = -1
        k = 0
        if s[PHASE] == P_DONE:
            seat[i] = -1
        else:
            k = k_legal(s, tab, opts, scratch)
            if k > cfg[C_K]:
                err[E_CODE] = ERR_OVER_K
                err[E_SLOT] = i
                err[E_COUNT] = k
                return 1
            if k <= 0:
                err[E_CODE] = ERR_NO_LEGAL
                err[E_SLOT] = i
                return 1
            seat[i] = s[CUR]
            for q in range(k):
                legal[i, q] = scratch[q]
        for q in range(k, n_legal[i]):
            legal[i, q] = -1
        n_legal[i] = k
        if cfg[C_OBSERVE] == 1:
            if seat[i] >= 0:
                k_encode(s, seat[i], tab, opts, offsets, obs[i])
            else:
                for d in range(obs.shape[1]):
                    obs[i, d] = 0.0
        if cfg[C_MASKS] == 1:
            for q in range(k):
                masks[i, legal[i, q]] = 1
    return 0


@njit(nogil=True)  # no Python objects: threads (the web app's sessions) run it at once
def _rollout_engine(k_legal, k_step, k_encode, tab, opts, offsets, states, slots, pp, kind, eps,
                    rng, returns, lengths, buf, tmp, scores, work, max_decisions, err, stop_seats,
                    waiting, obs, masks):
    """Play each slot of ``slots`` from its state with the rollout policy
    (:mod:`cardenvs.core.policy`; ``kind`` 0 heuristic, 1 uniform random, 2 heuristic0),
    adding every step's pay to ``returns[j]`` and counting its decisions in ``lengths[j]``
    (both accumulate: the caller zeroes them).  ``rng[j]`` is slot ``j``'s splitmix64 stream.
    A game stops early where a seat with ``stop_seats[seat] == 1`` is to move with two or more
    legal actions (another agent's decision: :meth:`VectorGame.rollout` with ``agent``):
    ``waiting[j] = 1``, the seat's observation in ``obs[j]`` and its legal actions in
    ``masks[j]``; otherwise it plays to the end (``waiting[j] = 0``).  Returns 1 with ``err``
    filled on an error, else 0.  The policy is :func:`~cardenvs.core.policy.policy_choose_play`
    (no play table: fast) and, where it returns -1, :func:`~cardenvs.core.policy.policy_choose`:
    the same choices."""
    n_players = returns.shape[1]
    counts = tab.counts
    for q in range(err.shape[0]):
        err[q] = 0
    for j in range(slots.shape[0]):
        i = slots[j]
        s = states[i]
        waiting[j] = 0
        d = lengths[j]
        while s[PHASE] != P_DONE:
            k = k_legal(s, tab, opts, buf)
            if k <= 0:
                err[E_CODE] = ERR_NO_LEGAL
                err[E_SLOT] = i
                return 1
            if k > 1 and stop_seats[s[CUR]] == 1:
                waiting[j] = 1
                k_encode(s, s[CUR], tab, opts, offsets, obs[j])
                masks[j, :] = 0
                for a in range(k):
                    masks[j, buf[a]] = 1
                break
            c = policy_choose_play(s, buf, k, counts, pp, scores, work, kind, rng, j, eps)
            if c < 0:
                c = policy_choose(s, buf, k, tab, opts, pp, k_step, tmp, scores, work, kind, rng,
                                  j, eps)
            k_step(s, buf[c], tab, opts)
            for p in range(n_players):
                returns[j, p] += s[REW0 + p]
            d += 1
            if d > max_decisions:
                err[E_CODE] = ERR_STUCK
                err[E_SLOT] = i
                return 1
        lengths[j] = d
    return 0


@njit(nogil=True)  # no Python objects: threads (the web app's sessions) run it at once
def _agent_moves(k_step, tab, opts, states, slots, rows, actions, returns, lengths):
    """Play ``actions[t]`` in the game of slot ``slots[rows[t]]`` (an agent's moves during
    :meth:`VectorGame.rollout`; legal: checked by the caller), adding the pay to
    ``returns[rows[t]]`` and one decision to ``lengths[rows[t]]``."""
    n_players = returns.shape[1]
    for t in range(rows.shape[0]):
        j = rows[t]
        s = states[slots[j]]
        k_step(s, actions[t], tab, opts)
        for p in range(n_players):
            returns[j, p] += s[REW0 + p]
        lengths[j] += 1
