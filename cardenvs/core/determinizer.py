"""Determinization's Python face: :class:`Determinizer`, :func:`determinize` and its batch.

A :class:`Determinizer` reads a game's declaration once per decision, compiles it
(:func:`cardenvs.core.sampler.compile_hidden`) and samples with the numba kernel, adding the
checks that need Python or the game's kernels (:class:`PassChecks`: the logged passes of a
must-beat game; a declaration's ``repair`` and ``choice``; a user's ``accept``).  The measure
is :mod:`cardenvs.core.infostate`'s module docstring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional, Sequence

import numpy as np
from numba import njit

from .hidden import (
    ConstraintLike, FirstMarker, GameLike, NotOnly, Pile, SuitFirst, _as_constraint, _check,
    _game_of, mask_of,
)
from .partial import PartialPlay, PendingLike, mover_partial, pending_of
from .sampler import MAX_TRIES, _sample, compile_hidden
from .state import CUR, hand_off, played_off

if TYPE_CHECKING:
    from .game import Game

# -- the Python face ----------------------------------------------------------------------------


def _seed_of(rng) -> int:
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy Generator (np.random.default_rng(seed)), got "
                        f"{type(rng).__name__}")
    return int(rng.integers(-2**63, 2**63 - 1, dtype=np.int64))


class PassChecks:
    """What the logged passes of the hidden seats tell, for a must-beat game
    (``Hidden.legal_passes``): at each such pass the seat held no play that beat the play to
    beat (under every rule of the game: ``game.is_legal`` of the pass), so a sampled state is
    consistent only when each pass stays legal with the sampled hand.

    The position of a pass is rebuilt from the sample (:meth:`ok`): every hand plus the cards
    its seat played after the pass (public, from the action log), the seat to move, the play
    to beat, the passes before it in the trick and the action count as they were then (the
    trick is replayed from the log with the rules of :func:`cardenvs.core.state.play_action`:
    a play sets the play to beat, ``n - 1`` passes end the trick).  Only these fields, the
    hands and the played cards are rewound: a game declaring ``legal_passes`` must decide a
    pass's legality from them (Pao De Kuai: the hands, the trick, the seat to move and the
    action count, which tells the first play of the deal).  Passes of the observer and of seats
    whose hand it knows tell nothing new and are not checked; a log longer than its ring
    buffer (``MAXLOG``) keeps only the passes it still holds.
    """

    def __init__(self, game: Game, state: np.ndarray, seat: int, piles: Sequence[Pile]) -> None:
        from .state import LAST_ROW, LAST_SEAT, MAXLOG, NLOG, NPASS, PLAYS0, log_entry
        from .state import PLAY_START

        n = game.n_players
        self.game = game
        self.pass_id = int(game.pass_id)
        self.hidden = sorted({p.seat for p in piles if p.seat >= 0})
        start, end = int(state[PLAY_START]), int(state[NLOG])
        if end - start > MAXLOG:  # the oldest actions are gone: begin at the first whole trick
            start = end - MAXLOG
        counts = game.table.arrays.counts
        log = [(int(log_entry(state, n, i)) // 8, int(log_entry(state, n, i)) % 8)
               for i in range(start, end)]
        # the trick before each action, forward
        events = []
        last_row, last_seat, npass = -1, -1, 0
        known = start == int(state[PLAY_START])  # the trick state is known from here on
        for j, (a, q) in enumerate(log):
            if a == self.pass_id:
                if known and q in self.hidden and last_row >= 0:
                    events.append((start + j, q, last_row, last_seat, npass))
                npass += 1
                if npass >= n - 1:
                    last_row, npass, known = -1, 0, True
            elif a < self.pass_id:
                last_row, last_seat, npass = a, q, 0
            else:  # a bid or another non-play action: not a play phase we can rewind
                known = False
        # the positions, backward: each seat's cards played after the pass
        self.templates: list[tuple[np.ndarray, np.ndarray]] = []
        after = np.zeros((n, 16), np.int64)
        plays = np.zeros(n, np.int64)
        k = len(events) - 1
        for j in range(end - 1, start - 1, -1):
            while k >= 0 and events[k][0] == j:
                _, q, last_row, last_seat, npass = events[k]
                t = state.copy()
                for p in range(n):
                    t[hand_off(p):hand_off(p) + 16] += after[p]
                    t[played_off(n, p):played_off(n, p) + 16] -= after[p]
                    t[PLAYS0 + p] -= plays[p]
                t[CUR], t[LAST_ROW], t[LAST_SEAT], t[NPASS], t[NLOG] = q, last_row, last_seat, npass, j
                self.templates.append((t, after[self.hidden].copy()))
                k -= 1
            a, q = log[j - start]
            if a < self.pass_id:
                after[q] += counts[a]
                plays[q] += 1

        m = len(self.templates)
        self._work = np.array([t for t, _ in self.templates], np.int64).reshape(m, len(state))
        self._after = np.array([a for _, a in self.templates], np.int64).reshape(
            m, len(self.hidden), 16)
        self._offs = np.array([hand_off(p) for p in self.hidden], np.int64)

    def __len__(self) -> int:
        return len(self.templates)

    def ok(self, row: np.ndarray) -> bool:
        """Whether every checked pass stays legal with the hidden hands of sample ``row``
        (plain Python; :meth:`ok_batch` is the kernel)."""
        for t, after in self.templates:
            x = t.copy()
            for i, p in enumerate(self.hidden):
                o = hand_off(p)
                x[o:o + 16] = row[o:o + 16] + after[i]
            if not self.game.is_legal(x, self.pass_id):
                return False
        return True

    def ok_batch(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`ok` of every row of ``rows`` (bool array), in one numba call with the game's
        own ``is_legal`` kernel (compiled for it on first use in a process)."""
        out = np.zeros(rows.shape[0], np.bool_)
        g = self.game
        _passes_hold(rows, self._work, self._offs, self._after, g.k_is_legal, g.tab, g.opts,
                     np.int64(self.pass_id), out)
        return out


@njit(cache=False, nogil=True)  # specialised on the game's is_legal dispatcher (uncacheable)
def _passes_hold(rows, work, offs, after, is_legal, tab, opts, pass_id, out):
    """``out[k]``: every pass position ``work[t]`` with row ``k``'s hidden hands (``offs``) plus
    the cards played since (``after[t]``) keeps the pass legal.  ``work`` is scratch: only its
    hidden hands are rewritten."""
    for k in range(rows.shape[0]):
        row = rows[k]
        ok = True
        for t in range(work.shape[0]):
            x = work[t]
            for i in range(offs.shape[0]):
                o = offs[i]
                for r in range(16):
                    x[o + r] = row[o + r] + after[t, i, r]
            if not is_legal(x, pass_id, tab, opts):
                ok = False
                break
        out[k] = ok


class Determinizer:
    """Samples full states consistent with what ``seat`` has observed in ``state``.

    Build it once per decision and call :meth:`sample` / :meth:`batch` as often as needed (the
    declaration is read and compiled once).  See :func:`determinize` for the measure;
    ``check_passes=False``: as :func:`determinize_batch` says; ``pending``: as
    :func:`determinize` says (:attr:`pending` holds the mover's partial play).
    """

    def __init__(self, game_or_env: GameLike, state: np.ndarray, seat: int,
                 constraint: ConstraintLike = None, check_passes: bool = True,
                 pending: PendingLike = "env") -> None:
        if not isinstance(check_passes, (bool, np.bool_)):
            raise TypeError(f"check_passes must be a bool, got {type(check_passes).__name__}")
        game = _game_of(game_or_env)
        snap = pending_of(game_or_env, state, pending)
        state, seat = _check(game, state, seat)
        self.game = game
        self.seat = seat
        self.state = state.copy()
        #: the seat's own partial play when it is the mover of a compact position between the
        #: decisions of one play (:class:`cardenvs.core.partial.PartialPlay`), else ``None``:
        #: every sample keeps the mover's hand and the public record, so it completes there
        #: to the same whole plays (``pending.plays``)
        self.pending: Optional[PartialPlay] = mover_partial(game, self.state, seat, snap)
        self.constraint = _as_constraint(constraint)
        self.decl = game.hidden(self.state, seat)
        self.program = compile_hidden(game, self.state, self.decl, self.constraint.exclude)
        self.passes = (PassChecks(game, self.state, seat, self.decl.piles)
                       if self.decl.legal_passes and check_passes else None)
        if self.passes is not None and not len(self.passes):
            self.passes = None
        self._python = (self.decl.choice or self.decl.repair is not None
                        or self.constraint.accept is not None or self.passes is not None)
        self._buf = np.zeros(game.n_actions + 1, np.int64)

    def _accept(self, row: np.ndarray) -> bool:
        return self._reject(row) is None

    def _reject(self, row: np.ndarray) -> Optional[str]:
        """The Python check a proposal fails (``"repair"``, ``"choice"``, ``"accept"``), or
        ``None`` when it passes them all."""
        if self.decl.repair is not None and not self.decl.repair(row):
            return "repair"
        if self.decl.choice and self.game.legal(row, self._buf) < 2:
            return "choice"
        if self.constraint.accept is not None and not self.constraint.accept(row):
            return "accept"
        return None

    def batch(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``(n, S)`` int64 array of ``n`` independent samples."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"n must be an int >= 0, got {n!r}")
        out = np.empty((int(n), self.state.shape[0]), np.int64)
        if not self._python:
            if _sample(self.state, self.program, _seed_of(rng), out, MAX_TRIES) < 0:
                raise RuntimeError(self._fail())
            return out
        # Python checks: proposals from the kernel in chunks, each checked in turn (rejection)
        chunk = np.empty((64, self.state.shape[0]), np.int64)
        k = 0
        tried = 0
        rejected = dict.fromkeys(("passes", "repair", "choice", "accept"), 0)
        while k < n:
            if tried >= MAX_TRIES:
                raise RuntimeError(self._fail(rejected))
            if _sample(self.state, self.program, _seed_of(rng), chunk, MAX_TRIES) < 0:
                raise RuntimeError(self._fail())
            passes = self.passes.ok_batch(chunk) if self.passes is not None else None
            for i, row in enumerate(chunk):
                tried += 1
                why = "passes" if passes is not None and not passes[i] else self._reject(row)
                if why is None:
                    out[k] = row
                    k += 1
                    tried = 0
                    rejected = dict.fromkeys(rejected, 0)
                    if k == n:
                        break
                else:
                    rejected[why] += 1
        return out

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One sampled state (a new int64 vector)."""
        return self.batch(rng, 1)[0]

    def _fail(self, rejected: Optional[dict] = None) -> str:
        """Why sampling gave up: the constraint no draw met, named.  ``rejected``: the Python
        checks' rejection counts (``None``: the kernel's own checks failed every draw)."""
        g = self.game
        head = (f"cannot determinize the {g.info.name} state for seat {self.seat}: no "
                f"{MAX_TRIES:,} draws of the cards it has not seen met ")
        if rejected is not None and any(rejected.values()):
            worst = max(rejected, key=lambda name: rejected[name])
            what = {
                "passes": f"the logged passes of seats {self.passes.hidden if self.passes else []}"
                          f" (a seat that passed held no play that beat; "
                          f"{len(self.passes) if self.passes else 0} passes checked)",
                "repair": "the game's consistency check of the fields derived from the hidden "
                          "hands (Hidden.repair)",
                "choice": f"the pending choice of seat {int(self.state[CUR])} (the sample must "
                          f"give it two legal actions or more)",
                "accept": "the constraint's accept function",
            }[worst]
            return (head + what + f" ({rejected[worst]:,} of the last draws failed it); "
                    f"the state may be unreachable, or the constraint impossible")
        return head + self._kernel_culprit() + "; the state may be unreachable, or the " \
            "constraint impossible"

    def _describe(self, item) -> str:
        """One kernel check or user exclusion in words."""
        names = {p.offset: p.name for p in self.decl.piles}
        ranks = self.game.deck.order

        def of(mask: int) -> str:
            return "".join(ranks[r] for r in range(len(ranks)) if (mask >> r) & 1)

        if isinstance(item, tuple):  # ("exclude", seat, cards)
            return f"the constraint that seat {item[1]} holds none of {item[2]!r}"
        if isinstance(item, NotOnly):
            return (f"the check that {names.get(item.offset, f'state[{item.offset}]')} holds "
                    f"a card outside {of(item.mask)!r} (NotOnly)")
        if isinstance(item, FirstMarker):
            return (f"the check that seat {item.expected} holds the first marked card of ranks "
                    f"{of(mask_of(item.ranks))!r} (FirstMarker)")
        if isinstance(item, SuitFirst):
            return (f"the suit rule that seat {item.expected} holds the first card of its suit "
                    f"in ranks {of(mask_of(item.ranks))!r} (SuitFirst)")
        return repr(item)  # pragma: no cover

    def _kernel_culprit(self) -> str:
        """The kernel check or user exclusion without which sampling succeeds (tried one at a
        time, with a few draws each), else every one in effect."""
        from dataclasses import replace

        items: list = [("exclude", q, c) for q, c in dict(self.constraint.exclude).items()]
        items += list(self.decl.checks)
        probe = np.empty((1, self.state.shape[0]), np.int64)
        for item in items:
            exclude: Mapping[int, str]
            if isinstance(item, tuple):
                exclude = {q: c for q, c in dict(self.constraint.exclude).items() if q != item[1]}
                decl = self.decl
            else:
                exclude = self.constraint.exclude
                decl = replace(self.decl, checks=[c for c in self.decl.checks if c is not item])
            try:
                prog = compile_hidden(self.game, self.state, decl, exclude)
            except ValueError:
                continue
            if _sample(self.state, prog, 12345, probe, 20_000) >= 0:
                return self._describe(item)
        if not items:
            return ("the hidden piles' own restrictions (the ranks a pile may hold, the cards "
                    "known in it)")
        return "these together: " + "; ".join(self._describe(x) for x in items)


def determinize(game_or_env: GameLike, state: np.ndarray, seat: int, rng: np.random.Generator,
                constraint: ConstraintLike = None, pending: PendingLike = "env") -> np.ndarray:
    """A full state consistent with everything ``seat`` has observed in ``state``.

    Uniform over the consistent deals as defined in :mod:`cardenvs.core.infostate`: every
    arrangement of the unseen physical cards over the unseen places (pile sizes fixed, cards
    known to be somewhere left there) is equally likely; records of how the piles arose are
    drawn uniformly given the arrangement; declared checks by rejection.  ``seat``'s
    observation (``game.encode``) of the result equals its observation of ``state``.

    Args:
        game_or_env: a :class:`cardenvs.core.game.Game`, a game name or an environment.
        state: the real state (int64 vector; ``game.check_state`` validates it).
        seat: the observer.
        rng: a ``numpy.random.Generator`` (the only source of randomness).
        constraint: ``None``; a mapping ``{seat: "cards"}`` of ranks a hidden hand may not
            hold; a callable ``state -> bool`` (rejection); or a :class:`Constraint`.
        pending: the partial play of a compact position between the decisions of one play
            (``"env"``: a compact environment's own when ``state`` is its current state; a
            ``(body, [kicker ids])`` snapshot; ``None``), checked legal in ``state``.  Its
            cards are still in the mover's hand in the state, so the samples keep them there:
            in every sample the partial play is legal and completes to the same whole plays.
            The other seats sample as from the position before the play (what they see).

    Raises:
        TypeError / ValueError for a bad game, state, seat, constraint or partial play, or a
        finished state; RuntimeError when no sample passes the constraints.
    """
    return Determinizer(game_or_env, state, seat, constraint, pending=pending).sample(rng)


def determinize_batch(game_or_env: GameLike, state: np.ndarray, seat: int,
                      rng: np.random.Generator, n: int, constraint: ConstraintLike = None,
                      check_passes: bool = True, pending: PendingLike = "env") -> np.ndarray:
    """``n`` independent :func:`determinize` samples as an ``(n, S)`` int64 array.

    ``check_passes=False`` leaves out what a must-beat game's logged passes tell (that the
    seat held no beating play): the samples then follow the other observations only, a wider
    belief for the rare position where the passes leave too few deals to find by rejection.
    ``pending``: as :func:`determinize` says."""
    return Determinizer(game_or_env, state, seat, constraint, check_passes,
                        pending).batch(rng, n)


def determinizations_per_second(game_or_env: GameLike, state: np.ndarray, seat: int,
                                n: int = 10_000, seed: int = 0) -> float:
    """Throughput of :func:`determinize_batch` on one position (for ``benchmarks/``): samples
    per second of one batch of ``n`` (after a warm-up call that compiles the kernel)."""
    import time

    d = Determinizer(game_or_env, state, seat)
    rng = np.random.default_rng(seed)
    d.batch(rng, 2)
    t0 = time.perf_counter()
    d.batch(rng, n)
    return n / (time.perf_counter() - t0)


def determinize_benchmark(game_or_env: GameLike, n_positions: int = 50,
                          n_samples: int = 2_000, seed: int = 0) -> dict:
    """Determinization speed over random positions of a game (for ``benchmarks/``).

    Positions are decisions of uniformly random games (every phase, a random observer);
    returns ``{"game", "positions", "samples_per_s"`` (all samples over all batch time),
    ``"median_per_s"``, ``"min_per_s"`` (per position), ``"build_us"`` (mean cost of
    building a :class:`Determinizer`: reading and compiling the declaration)``}``.
    """
    import time

    game = _game_of(game_or_env)
    rng = np.random.default_rng(seed)
    s = game.new_state()
    buf = np.empty(game.n_actions + 1, np.int64)
    pos: list[tuple[np.ndarray, int]] = []
    while len(pos) < n_positions:
        game.reset(s, int(rng.integers(2**62)))
        k_stop = int(rng.integers(1, 200))
        for _ in range(k_stop):
            if game.done(s):
                break
            game.step(s, int(buf[rng.integers(game.legal(s, buf))]))
        if not game.done(s):
            pos.append((s.copy(), int(rng.integers(game.n_players))))
    Determinizer(game, *pos[0]).batch(rng, 2)  # compile / load the kernel
    rates, total, build = [], 0.0, 0.0
    for st, seat in pos:
        t0 = time.perf_counter()
        d = Determinizer(game, st, seat)
        t1 = time.perf_counter()
        d.batch(rng, n_samples)
        t2 = time.perf_counter()
        build += t1 - t0
        total += t2 - t1
        rates.append(n_samples / (t2 - t1))
    return {"game": game.info.name, "positions": len(pos),
            "samples_per_s": len(pos) * n_samples / total,
            "median_per_s": float(np.median(rates)), "min_per_s": float(min(rates)),
            "build_us": 1e6 * build / len(pos)}
