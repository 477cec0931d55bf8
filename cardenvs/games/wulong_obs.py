"""Lanxi Wulong's observation: the layout of its fields and the kernel that encodes a seat's view.

The rules and the engine's decisions are in :mod:`cardenvs.games.wulong`.
"""

from __future__ import annotations

from numba import njit

from ..core.combos import N_FAMILIES
from ..core.encode import Field, Layout, deck_less_hand, put_cards, put_seat_or_none
from ..core.state import (
    CUR, LAST_ROW, LAST_SEAT, P_DONE, P_PLAY, PHASE, WINNER, hand_off, played_off,
)
from .wulong_layout import (
    A_LOSER, A_NREC, A_PEND, EV, HAND, K_REC, NAT, NP, NR, O_DEPTH, O_NRANKS, O_RECENT, P_WILD,
    X_DECL, X_LB, X_LR, X_PB, X_PR, X_REC, X_STATUS,
)


#: indices of the fields in the offsets ``off`` that :func:`encode` reads
(F_HAND, F_DECL_HANDS, F_PLAYED, F_OTHERS, F_SIZES, F_BEAT, F_BEAT_WILDS, F_BEAT_TYPE,
 F_BEAT_SEAT, F_PENDING, F_PENDING_WILDS, F_RECENT, F_DECLARED, F_STATUS, F_HEAD, F_LOSER,
 F_TURN, F_PHASE) = range(18)

WILD_PLANES = NAT * 4  # per natural rank: >=1, >=2 small jokers, >=1, >=2 big jokers stand in


def obs_layout(depth: int = 8, recent: int = K_REC) -> Layout:
    """The observation fields, in order.  Relative seats: 0 = the observer, 1 = next (下家)..."""
    n = NP
    C = NR * depth
    cards = f"{NR} ranks x {depth} planes, bit r*{depth}+k-1 set when holding >= k of rank r"
    wilds = ("13 natural ranks x 4: bit r*4+k-1 set when >= k small jokers (k = 1, 2), "
             "bit r*4+2+k-1 when >= k big jokers stand for rank r")
    E = C + WILD_PLANES + 1 + n
    return Layout([
        Field("hand", C, f"own hand ({cards}; rank 0 = 3 ... 12 = 2, 13 = B, 14 = R)"),
        Field("declared_hands", n * C, "hand of each relative seat that has declared (报牌), "
                                       "zeros for the others"),
        Field("played", n * C, "cards played so far by each relative seat, jokers as jokers"),
        Field("others", C, "cards the observer has not seen: the 108-card deck minus his hand, "
                           "every played card and the declared hands (the 8 unused cards "
                           "included)"),
        Field("hand_sizes", n, f"cards in hand per relative seat / {HAND}"),
        Field("to_beat", C, "effective cards of the play to beat (a joker counted as the rank it "
                            "stands for; zeros on a free lead)"),
        Field("to_beat_wilds", WILD_PLANES,
              f"jokers standing in within the play to beat ({wilds})"),
        Field("to_beat_type", N_FAMILIES,
              "one-hot family of the play to beat (see combos.FAMILY_NAMES)"),
        Field("to_beat_seat", n, "one-hot relative seat of the play to beat"),
        Field("pending", C, "effective cards of the observer's own play being realised (wilds "
                            "phase, the mover only), else zeros"),
        Field("pending_wilds", WILD_PLANES, "jokers picked so far for that play"),
        Field("recent", recent * E,
              f"last {recent} plays and passes, most recent first; each: effective cards ({C}), "
              f"jokers standing in ({WILD_PLANES}), pass flag (1), relative seat one-hot ({n})"),
        Field("declared", n, "per relative seat: 1 when it has declared"),
        Field("status", 3 * n, "per relative seat one-hot: active, out, failed (only 3s left)"),
        Field("head", n + 1, "one-hot relative seat of the 头家 (first out); last slot: none yet"),
        Field("loser", n + 1, "one-hot relative seat of the 末家 once fixed; last slot: not yet"),
        Field("turn", n, "one-hot relative seat to move"),
        Field("phase", 3, "one-hot phase: play, wilds (choosing jokers; every seat but the "
                          "mover sees play), done"),
    ])


@njit(cache=True, inline="always")
def _put_wilds(out, off, kb, kr):
    for r in range(NAT):
        for k in range(min(kb[r], 2)):
            out[off + r * 4 + k] = 1.0
        for k in range(min(kr[r], 2)):
            out[off + r * 4 + 2 + k] = 1.0


@njit(cache=True)
def encode(s, seat, tab, o, off, out):
    """Write ``seat``'s observation into ``out`` (float32, zeroed here)."""
    n = NP
    R = o[O_NRANKS]
    D = o[O_DEPTH]
    C = R * D
    out[:] = 0.0
    ho = hand_off(seat)
    put_cards(out, off[F_HAND], s[ho:ho + 16], R, D)
    others = deck_less_hand(s, ho, NAT, 8, 2)
    for k in range(n):
        q = (seat + k) % n
        qo = hand_off(q)
        po = played_off(n, q)
        put_cards(out, off[F_PLAYED] + k * C, s[po:po + 16], R, D)
        sz = 0
        for r in range(16):
            others[r] -= s[po + r]
            sz += s[qo + r]
        out[off[F_SIZES] + k] = sz / HAND
        if s[X_DECL + q] == 1:
            put_cards(out, off[F_DECL_HANDS] + k * C, s[qo:qo + 16], R, D)
            out[off[F_DECLARED] + k] = 1.0
            if q != seat:
                for r in range(16):
                    others[r] -= s[qo + r]
        out[off[F_STATUS] + 3 * k + s[X_STATUS + q]] = 1.0
    put_cards(out, off[F_OTHERS], others, R, D)
    prev = s[LAST_ROW]
    if prev >= 0 and s[PHASE] != P_DONE:
        put_cards(out, off[F_BEAT], tab.counts[prev], R, D)
        _put_wilds(out, off[F_BEAT_WILDS], s[X_LB:X_LB + NAT], s[X_LR:X_LR + NAT])
        out[off[F_BEAT_TYPE] + tab.family[prev]] = 1.0
        out[off[F_BEAT_SEAT] + (s[LAST_SEAT] - seat) % n] = 1.0
    pend = s[A_PEND]
    mover = seat == s[CUR]
    if s[PHASE] == P_WILD and pend >= 0 and mover:  # the picks are the mover's secret
        put_cards(out, off[F_PENDING], tab.counts[pend], R, D)
        _put_wilds(out, off[F_PENDING_WILDS], s[X_PB:X_PB + NAT], s[X_PR:X_PR + NAT])
    E = C + WILD_PLANES + 1 + n
    nrec = s[A_NREC]
    for j in range(min(o[O_RECENT], nrec, K_REC)):
        e = X_REC + ((nrec - 1 - j) % K_REC) * EV
        base = off[F_RECENT] + j * E
        row = s[e + 1]
        if row < 0:
            out[base + C + WILD_PLANES] = 1.0
        else:
            put_cards(out, base, tab.counts[row], R, D)
            _put_wilds(out, base + C, s[e + 2:e + 2 + NAT], s[e + 2 + NAT:e + 2 + 2 * NAT])
        out[base + C + WILD_PLANES + 1 + (s[e] - seat) % n] = 1.0
    w = s[WINNER]
    put_seat_or_none(out, off[F_HEAD], w, seat, n)
    put_seat_or_none(out, off[F_LOSER], s[A_LOSER], seat, n)
    if s[PHASE] != P_DONE:
        out[off[F_TURN] + (s[CUR] - seat) % n] = 1.0
    ph = s[PHASE]
    if ph == P_WILD and not mover:
        ph = P_PLAY  # every other seat sees the position before the mover chose his play
    out[off[F_PHASE] + (0 if ph == P_PLAY else (1 if ph == P_WILD else 2))] = 1.0
