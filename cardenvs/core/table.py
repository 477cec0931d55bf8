"""The play table: every canonical play of a game compiled to flat integer arrays.

Layout: rows are sorted by shape class (family, chain length),
then by key (main rank), then by body, so that

* a *follow* is a scan of one contiguous run of groups of the class, starting at the first
  group whose key beats the play to beat (precomputed per row in ``fnext``), plus the bomb
  groups whose power beats it (``bnext``);
* a *free lead* tests each group's body (the play without kickers) with one AND-NOT and only
  then its kicker variants;
* consecutive groups of a class form *segments*: a regular segment's bodies are the same run
  of ``L`` consecutive ranks with exactly ``m`` cards each, starting one rank higher per group
  (singles, pairs, trios, bombs of one size, chains of one length, the trio / quad / airplane
  bodies of the kicker families), so which of its bodies a hand can make is one run mask of
  the hand's plane ``m`` (see :mod:`cardenvs.core.kernels`).  Anything else (a rocket, an odd
  preset row) is an irregular segment (``m = 0``) whose bodies are tested one by one.
  Columns of ``seg``: first group, end group, ``m`` (0 = irregular), ``L``, first rank of
  the first group's run, ``lone`` (1 when every group is one row equal to its body),
  ``skip``: the next segment that may still fit when none of this one's bodies does, and the
  family of its rows times 64 plus their chain length (one of each a segment).

A row's index is its action id in the play block of the environment's action space, so masks
and ``action_to_string`` need no lookup.  Hands and plays are rank planes: bit ``16*(k-1)+r``
of ``lo`` is set when there are at least ``k`` cards of rank ``r`` (k = 1..4), and ``hi`` holds
k = 5..8 the same way, so "the hand can make the play" is
``(play.lo & ~hand.lo) | (play.hi & ~hand.hi) == 0``.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

import numpy as np

from .cards import NSLOT, Deck
from .combos import FAMILY_CODES, FAMILY_NAMES, ROCKET, Play


def cached(build):
    """Keep the tables ``build(*args)`` makes on disk (a drop-in for ``functools.lru_cache``
    on a game's ``play_table``): Dou Dizhu's 28,241-row table takes about 2 s to enumerate in
    Python, every process; a pickle of it loads in milliseconds.

    The file's name hashes the function, its arguments, and the source of every module of
    ``cardenvs/core`` and ``cardenvs/games`` (any change to the rules or the table code makes
    a new file, never a stale table) with the numpy version; it lives in
    :func:`cardenvs.core.specialize.cache_dir` ``("tables")`` and is written atomically.  An
    unreadable file is rebuilt; a folder that cannot be written only costs the time.
    """
    import functools

    @functools.lru_cache(maxsize=None)
    def wrapper(*args, **kwargs):
        import hashlib
        import os
        import pickle
        import tempfile
        from pathlib import Path

        from .specialize import cache_dir

        pkg = Path(__file__).resolve().parent.parent
        h = hashlib.sha256(f"{build.__module__}.{build.__qualname__}{args!r}"
                           f"{sorted(kwargs.items())!r}{np.__version__}".encode())
        for src in sorted([*pkg.glob("core/*.py"), *pkg.glob("games/*.py")]):
            h.update(src.name.encode() + src.read_bytes())
        path = cache_dir("tables") / f"{build.__name__}-{h.hexdigest()[:24]}.pkl"
        try:
            with open(path, "rb") as f:
                table = pickle.load(f)
            if isinstance(table, Table):
                return table
        except Exception:  # noqa: BLE001 - missing, truncated or foreign: rebuild
            pass
        table = build(*args, **kwargs)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".table.", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(table, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except Exception:  # noqa: BLE001 - a cache only: the table is still returned
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
        return table

    return functools.wraps(build)(wrapper)


class PlayTable(NamedTuple):
    """Numba-friendly arrays of a play table (all ``int64`` unless noted)."""

    lo: np.ndarray  # (T,) planes 1-4
    hi: np.ndarray  # (T,) planes 5-8
    counts: np.ndarray  # (T, 16) int64 cards of each rank
    ncards: np.ndarray  # (T,)
    family: np.ndarray  # (T,)
    length: np.ndarray  # (T,)
    key: np.ndarray  # (T,)
    power: np.ndarray  # (T,) bomb power, 0 for non-bombs
    doubles: np.ndarray  # (T,) stake doublings when played
    group: np.ndarray  # (T,) group of the row
    fnext: np.ndarray  # (T,) first group of the follow class that beats the row
    fend: np.ndarray  # (T,) end of the follow class's groups
    bnext: np.ndarray  # (T,) first bomb group that beats the row
    g_lo: np.ndarray  # (G,) body planes
    g_hi: np.ndarray  # (G,)
    g_start: np.ndarray  # (G,) first row of the group
    g_end: np.ndarray  # (G,) one past the last row
    g_bomb_end: np.ndarray  # (1,) end of the bomb groups (they are last)
    seg: np.ndarray  # (S, 8) segments of groups (columns ``kernels.SEG_*``; see below)
    g_seg: np.ndarray  # (G,) segment of each group
    g_kick: np.ndarray  # (G,) offset of the group's kicker index in ``kick``, -1: none
    kick: np.ndarray  # (K,) kicker indexes (:func:`kicker_index`)
    g_bits: np.ndarray  # (G,) offset of the group's row-bit index in ``bits``, -1: none
    bits: np.ndarray  # (B,) row-bit indexes (:func:`row_bits`)


def planes_of(counts: Sequence[int]) -> tuple[int, int]:
    """Rank planes (lo, hi) of a count vector (pure Python; the numba twin is in kernels)."""
    lo = hi = 0
    for r in range(NSLOT):
        c = int(counts[r])
        for k in range(1, min(c, 4) + 1):
            lo |= 1 << (16 * (k - 1) + r)
        for k in range(5, min(c, 8) + 1):
            hi |= 1 << (16 * (k - 5) + r)
    return lo, hi


def run_of(body: Sequence[int]) -> Optional[tuple[int, int, int]]:
    """``(m, L, s)`` when ``body`` is exactly ``m`` cards (1..8) of each of the ``L`` consecutive
    ranks ``s .. s+L-1`` and nothing else; ``None`` otherwise."""
    ranks = [r for r in range(len(body)) if body[r]]
    if not ranks:
        return None
    m = int(body[ranks[0]])
    s, L = ranks[0], len(ranks)
    if not 1 <= m <= 8 or ranks[-1] - s + 1 != L or any(int(body[r]) != m for r in ranks):
        return None
    return m, L, s


def _segments(plays: Sequence[Play], g_shape: list, g_start: list,
              g_end: list) -> tuple[np.ndarray, np.ndarray]:
    """Split the groups into segments (see the module docstring): ``(seg (S, 8), g_seg (G,))``.

    A segment stays within one shape class, one family and chain length (bombs of several
    families share a class; the kernels read a segment's family from its first row) and one
    ``lone`` value; a regular one continues while each group's body is the previous group's
    run shifted up by one rank.
    """
    from .kernels import (
        SEG_COLS, SEG_FL, SEG_G0, SEG_G1, SEG_LEN, SEG_LONE, SEG_M, SEG_S0, SEG_SKIP,
    )

    rows: list[list[int]] = []
    g_seg = np.zeros(len(g_start), np.int64)
    prev = None  # (shape, lone, run) of the previous group
    for g in range(len(g_start)):
        a, b = g_start[g], g_end[g]
        body = plays[a].body
        lone = int(b - a == 1 and tuple(plays[a].counts) == tuple(body))
        run = run_of(body)
        shape = (g_shape[g], plays[a].family, plays[a].length)
        cont = False
        if prev is not None and prev[0] == shape and prev[1] == lone:
            if run is None:
                cont = prev[2] is None
            elif prev[2] is not None:
                pm, pl, ps = prev[2]
                cont = (pm, pl, ps + 1) == run
        if not cont:
            r = [0] * SEG_COLS
            r[SEG_G0] = g
            if run is not None:
                r[SEG_M], r[SEG_LEN], r[SEG_S0] = run
            r[SEG_LONE] = lone
            r[SEG_FL] = plays[a].family * 64 + plays[a].length
            rows.append(r)
        rows[-1][SEG_G1] = g + 1
        g_seg[g] = len(rows) - 1
        prev = (shape, lone, run)
    # skip: where to go when no body of a segment fits.  Segment B "follows" A when both are
    # regular, B's plane and run length are at least A's and B's first ranks are among A's
    # (chains of one family by length, bombs by size); then a hand that fits no body of A
    # fits none of B (a run of L' >= L ranks with >= m' >= m cards contains one of A's).
    def follows(a, b):
        return (a[SEG_M] > 0 and b[SEG_M] >= a[SEG_M] and b[SEG_LEN] >= a[SEG_LEN]
                and b[SEG_S0] >= a[SEG_S0]
                and b[SEG_S0] + b[SEG_G1] - b[SEG_G0] <= a[SEG_S0] + a[SEG_G1] - a[SEG_G0])

    for i in range(len(rows) - 1, -1, -1):
        j = i + 1
        while j < len(rows) and follows(rows[j - 1], rows[j]):
            j += 1
        rows[i][SEG_SKIP] = j
    seg = np.array(rows, np.int64).reshape(len(rows), SEG_COLS)
    return seg, g_seg


#: the fewest rows a group must have to get a kicker index: a hand makes a small part of a large
#: group's rows (an airplane's thousands), which the index enumerates; a small group's rows are
#: cheaper tested one by one (Pao De Kuai's trio + 2: 90 rows, half of them made by a hand with
#: the trio; measured with the kernel loops of ``benchmarks/run_ours.py``)
KICK_MIN_ROWS = 256


def kicker_index(plays: Sequence[Play], g_start: Sequence[int], g_end: Sequence[int],
                 min_rows: int = KICK_MIN_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """Kicker indexes of the groups whose rows are a *box* of kickers: ``(g_kick, kick)``.

    A group qualifies when its rows are the body plus every kicker vector ``c`` with
    ``0 <= c[r] <= u[r]`` and ``kmin <= sum(c) <= kmax`` (``u`` zero on the body's ranks, at most
    15 ranks with ``u > 0``), which is how trios and airplanes carrying any cards of other ranks
    are built (Pao De Kuai).  The table sorts a group's rows by their counts, so a row's place in
    its group is its kicker vector's rank in lexicographic order, rank 0 first:
    ``sum_r sum_{v < c[r]} N[r+1][s_r + v]``, with ``s_r`` the kickers on ranks below ``r`` and
    ``N[r][s]`` the number of completions of ranks ``r..15`` from ``s`` kickers.  The index of
    a group stores ``kmin, kmax, u[0..15]`` and the prefix sums ``C[r][x] = sum_{v < x} N[r][v]``
    (17 rows of ``kmax + 1``), from which :func:`cardenvs.core.kernels.gen_rows` enumerates the
    hand's kickers and computes their rows instead of testing every row of the group.  Each
    index is checked here against the rows it replaces (count and every row's rank).
    """
    g_kick = np.full(len(g_start), -1, np.int64)
    chunks: list[np.ndarray] = []
    size = 0
    for g, (a, b) in enumerate(zip(g_start, g_end)):
        if b - a < min_rows:
            continue
        body = np.array(plays[a].body, np.int64)
        kv = np.array([p.counts for p in plays[a:b]], np.int64) - body
        if kv.min() < 0:
            continue
        u = kv.max(0)
        if (u[body > 0] > 0).any() or (u > 0).sum() > 15 or u.max() > 8:
            continue
        sums = kv.sum(1)
        kmin, kmax = int(sums.min()), int(sums.max())
        W = kmax + 1
        N = np.zeros((NSLOT + 1, W), np.int64)
        N[NSLOT, kmin:] = 1
        for r in range(NSLOT - 1, -1, -1):
            for s in range(W):
                N[r, s] = N[r + 1, s:min(W, s + u[r] + 1)].sum()
        if N[0, 0] != b - a:
            continue
        C = np.zeros((NSLOT + 1, W), np.int64)
        C[:, 1:] = np.cumsum(N[:, :-1], axis=1)
        rank = np.zeros(b - a, np.int64)  # every row's lexicographic rank, from the index
        pre = np.zeros(b - a, np.int64)
        for r in range(NSLOT):
            rank += C[r + 1, pre + kv[:, r]] - C[r + 1, pre]
            pre += kv[:, r]
        if not np.array_equal(rank, np.arange(b - a)):
            continue
        g_kick[g] = size
        chunk = np.concatenate([[kmin, kmax], u, C.ravel()]).astype(np.int64)
        chunks.append(chunk)
        size += len(chunk)
    kick = np.concatenate(chunks) if chunks else np.zeros(1, np.int64)
    return g_kick, kick


#: the fewest rows a group must have to get a row-bit index (:func:`row_bits`), and the most
#: (four 64-bit words): below it the rows are tested one by one, above it a kicker index or
#: the test enumerate them
BITS_MIN_ROWS = 64
BITS_MAX_ROWS = 256


def row_bits(lo: np.ndarray, hi: np.ndarray, ncards: np.ndarray, g_lo: Sequence[int],
             g_hi: Sequence[int], g_start: Sequence[int], g_end: Sequence[int],
             skip: np.ndarray, min_rows: int = BITS_MIN_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """Row-bit indexes of the groups of ``min_rows`` to :data:`BITS_MAX_ROWS` rows (none where
    ``skip[g]``: a group with a kicker index): ``(g_bits, bits)``.

    A row fits a hand that makes its group's body exactly when the hand has every plane bit
    the row adds to the body.  The index of a group lists, for each such bit, the rows that
    need it as a bitset of ``W = ceil(R / 64)`` words (bit ``j`` of word ``w``: row
    ``g_start + 64 * w + j``): ``R, W, used_lo, used_hi, c0, nc``, then ``W`` words per used
    bit, ``used_lo``'s bits from the lowest first, then ``used_hi``'s, then ``W`` words per card
    count ``c0 .. c0 + nc - 1`` (the rows of that many cards: the whole-hand rule of
    :func:`cardenvs.core.kernels.scan_whole` clears the short ones without reading the rows).
    :func:`cardenvs.core.kernels._emit_bits` clears the rows of the bits a hand lacks and reads
    the rest out in row order.  Each index is checked here against the rows' own planes and
    card counts.
    """
    g_bits = np.full(len(g_start), -1, np.int64)
    chunks: list[np.ndarray] = []
    size = 0
    for g, (a, b) in enumerate(zip(g_start, g_end)):
        R = b - a
        if skip[g] or not min_rows <= R <= BITS_MAX_ROWS:
            continue
        W = (R + 63) // 64
        add = [[int(lo[t]) & ~int(g_lo[g]) for t in range(a, b)],
               [int(hi[t]) & ~int(g_hi[g]) for t in range(a, b)]]
        used = [0, 0]
        for part in range(2):
            for x in add[part]:
                used[part] |= x
        words = []
        for part in range(2):
            for bit in range(64):
                if not (used[part] >> bit) & 1:
                    continue
                w = [0] * W
                for j, x in enumerate(add[part]):
                    if (x >> bit) & 1:
                        w[j // 64] |= 1 << (j % 64)
                words += w
        nslots = len(words) // W
        c0 = int(ncards[a:b].min())
        nc = int(ncards[a:b].max()) - c0 + 1
        for c in range(c0, c0 + nc):
            w = [0] * W
            for j in range(R):
                if int(ncards[a + j]) == c:
                    w[j // 64] |= 1 << (j % 64)
            words += w
        for j in range(R):  # the checks: each row's card count and bits are its own
            got = [c for c in range(nc) if (words[(nslots + c) * W + j // 64] >> (j % 64)) & 1]
            if got != [int(ncards[a + j]) - c0]:
                raise AssertionError(f"row-bit index of group {g}: row {a + j}'s card count")
        for part in range(2):
            slots = [bit for bit in range(64) if (used[part] >> bit) & 1]
            base = 0 if part == 0 else bin(used[0]).count("1")
            for j, x in enumerate(add[part]):
                row = sum(1 << bit for i, bit in enumerate(slots)
                          if (words[(base + i) * W + j // 64] >> (j % 64)) & 1)
                if row != x:
                    raise AssertionError(f"row-bit index of group {g}: row {a + j} differs")
        signed = [v - (1 << 64) if v >= 1 << 63 else v for v in (R, W, *used, c0, nc, *words)]
        g_bits[g] = size
        chunks.append(np.array(signed, np.int64))
        size += len(signed)
    bits = np.concatenate(chunks) if chunks else np.zeros(1, np.int64)
    return g_bits, bits


class Table:
    """A compiled play table plus the Python-side lookups (strings, readings).

    Args:
        deck: the game's deck (for formatting).
        plays: every canonical play (from :func:`cardenvs.core.combos.enumerate_plays` or a
            preset).
        follow: optional per-play override of what a follower must beat after this play:
            ``None`` keeps the play's own reading; ``(family, length, key)`` substitutes
            another reading; ``False`` means only bombs may follow (a preset's unreadable
            play).  Used by presets that reproduce another package's quirks.
    """

    def __init__(self, deck: Deck, plays: Sequence[Play], follow: Optional[Sequence] = None):
        self.deck = deck
        n = len(plays)
        if follow is None:
            follow = [None] * n

        def shape(family, length, power):
            return (1, 0) if power > 0 else (0, family * 64 + length)

        order = sorted(
            range(n),
            key=lambda i: (shape(plays[i].family, plays[i].length, plays[i].bomb_power),
                           plays[i].key, plays[i].body, plays[i].counts),
        )
        self.plays: list[Play] = [plays[i] for i in order]
        follow = [follow[i] for i in order]
        T = n
        lo = np.zeros(T, np.int64)
        hi = np.zeros(T, np.int64)
        counts = np.zeros((T, NSLOT), np.int64)
        fam = np.zeros(T, np.int64)
        length = np.zeros(T, np.int64)
        key = np.zeros(T, np.int64)
        power = np.zeros(T, np.int64)
        doubles = np.zeros(T, np.int64)
        group = np.zeros(T, np.int64)
        g_lo, g_hi, g_start, g_end, g_shape, g_key = [], [], [], [], [], []
        prev_gid = None
        for t, p in enumerate(self.plays):
            lo[t], hi[t] = planes_of(p.counts)
            counts[t] = p.counts
            fam[t], length[t], key[t] = p.family, p.length, p.key
            power[t], doubles[t] = p.bomb_power, p.doubles
            gid = (shape(p.family, p.length, p.bomb_power), p.key, p.body)
            if gid != prev_gid:
                blo, bhi = planes_of(p.body)
                g_lo.append(blo)
                g_hi.append(bhi)
                g_start.append(t)
                g_end.append(t)
                g_shape.append(gid[0])
                g_key.append(p.key)
                prev_gid = gid
            g_end[-1] = t + 1
            group[t] = len(g_start) - 1
        G = len(g_start)
        g_shape_arr = g_shape
        # class ranges
        cls_range: dict[tuple, tuple[int, int]] = {}
        for g, s in enumerate(g_shape_arr):
            a, b = cls_range.get(s, (g, g))
            cls_range[s] = (min(a, g), g + 1)
        bomb_lo, bomb_hi = cls_range.get((1, 0), (G, G))
        fnext = np.zeros(T, np.int64)
        fend = np.zeros(T, np.int64)
        bnext = np.zeros(T, np.int64)
        for t, p in enumerate(self.plays):
            f = follow[t]
            if f is False:
                fnext[t] = fend[t] = 0
                fpow = 0
            else:
                if f is None:
                    ffam, flen, fkey, fpow = p.family, p.length, p.key, p.bomb_power
                else:
                    ffam, flen, fkey = f
                    fpow = 0
                s = shape(ffam, flen, fpow)
                if fpow > 0:
                    fnext[t] = fend[t] = 0  # bombs are handled by the bomb scan
                else:
                    a, b = cls_range.get(s, (0, 0))
                    g = a
                    while g < b and g_key[g] <= fkey:
                        g += 1
                    fnext[t], fend[t] = g, b
            g = bomb_lo
            while g < bomb_hi and g_key[g] <= fpow:
                g += 1
            bnext[t] = g
        seg, g_seg = _segments(self.plays, g_shape, g_start, g_end)
        g_kick, kick = kicker_index(self.plays, g_start, g_end)
        g_bits, bits = row_bits(lo, hi, counts.sum(1), g_lo, g_hi, g_start, g_end, g_kick >= 0)
        self.arrays = PlayTable(
            lo, hi, counts, counts.sum(1), fam, length, key, power, doubles, group,
            fnext, fend, bnext,
            np.array(g_lo, np.int64), np.array(g_hi, np.int64),
            np.array(g_start, np.int64), np.array(g_end, np.int64),
            np.array([bomb_hi], np.int64), seg, g_seg, g_kick, kick, g_bits, bits,
        )
        # Python-side lookups; plays are parsed against the most cards of a rank any row holds
        # (more than the deck's copies in wild-joker games, whose rows are effective plays)
        most = counts.max(0) if T else np.zeros(NSLOT, np.int64)
        self.play_deck = Deck(deck.order, tuple(max(int(c), int(m))
                                                 for c, m in zip(deck.copies, most)))
        self._strings = [self._format(p) for p in self.plays]
        self._by_string = {s: i for i, s in enumerate(self._strings)}
        if len(self._by_string) != T:
            raise AssertionError("two rows format to the same action string")
        self._by_counts: dict[tuple, list[int]] = {}
        for i, p in enumerate(self.plays):
            self._by_counts.setdefault(p.counts, []).append(i)

    def __len__(self) -> int:
        return len(self.plays)

    # -- strings ---------------------------------------------------------------------------
    def _format(self, p: Play) -> str:
        body = self.deck.format(p.body)
        if p.body == p.counts:
            return body
        kick = tuple(c - b for c, b in zip(p.counts, p.body))
        return body + "+" + self.deck.format(kick)

    def row_string(self, row: int) -> str:
        """The action string of a row: cards, or ``body+kickers`` for plays with kickers."""
        return self._strings[row]

    def reading(self, row: int) -> str:
        """A row as its play type and cards (``"straight of 5 34567"``), for messages."""
        p = self.plays[row]
        name = FAMILY_NAMES[p.family]
        if p.length > 1:
            name += f" of {p.length}"
        return f"{name} {self._strings[row]}"

    def rows_of_cards(self, counts: Sequence[int] | np.ndarray) -> list[int]:
        """The rows (plays) made of exactly the cards ``counts`` (one count per rank)."""
        return list(self._by_counts.get(tuple(int(c) for c in counts), []))

    def find(self, text: str, family: Optional[str] = None, *, strict: bool = False,
             what: str = "play") -> int:
        """The row of a play written as cards (``"33344"``) or ``body+kickers``.

        Raises ``ValueError`` when the cards are no play of this game, or when they can be
        read in more than one way and neither the ``+`` notation nor ``family`` decides.  With
        ``strict=False`` plain cards prefer the reading without kickers (the way
        :meth:`row_string` writes it), so strings round-trip.
        """
        if not isinstance(text, str):
            raise TypeError(f"{what} must be a string, got {type(text).__name__}")
        s = text.replace(" ", "")
        if "+" in s:
            if s in self._by_string:
                row = self._by_string[s]
                if family is not None and FAMILY_NAMES[self.plays[row].family] != family:
                    raise ValueError(f"{what} {text!r} is a {self.reading(row)}, not a {family}")
                return row
            body, _, kick = s.partition("+")
            counts = self.play_deck.parse(body, what=what) + self.play_deck.parse(kick, what=what)
            body_cards = self.deck.format(self.play_deck.parse(body))
            rows = [r for r in self.rows_of_cards(counts)
                    if self.deck.format(self.plays[r].body) == body_cards]
        else:
            counts = self.play_deck.parse(s, what=what)
            rows = self.rows_of_cards(counts)
        if family is not None:
            if family not in FAMILY_CODES:
                raise ValueError(f"unknown play type {family!r}; known: {', '.join(FAMILY_NAMES)}")
            rows = [r for r in rows if self.plays[r].family == FAMILY_CODES[family]]
        if not rows:
            extra = f" of type {family}" if family else ""
            raise ValueError(f"{what} {text!r} is not a legal combination{extra} in this game")
        if len(rows) > 1 and "+" not in s:
            plain = [r for r in rows if self.plays[r].body == self.plays[r].counts]
            if len(plain) == 1 and family is None and not strict:
                return plain[0]
        if len(rows) > 1:
            readings = "; ".join(self.reading(r) for r in rows)
            raise ValueError(
                f"{what} {text!r} can be read in more than one way: {readings}. "
                f"Pick one with prev_type= (a type name) or write it as body+kickers"
            )
        return rows[0]

    def is_rocket(self, row: int) -> bool:
        """Whether row ``row`` is the rocket (both jokers)."""
        return self.plays[row].family == ROCKET
