"""打娘娘 Da Niangniang: the observation, :func:`obs_layout` and its kernel :func:`encode`.

What each seat sees: its hand, the 娘娘's exchange (his own, or everyone's once a hand is
over), the cards played and what each joker stood for, the play to beat, the recent moves,
places and stuck seats, the joker follow-up (the mover's secret), the 亮3 draw and the match.
"""

from __future__ import annotations

from numba import njit

from ..core.combos import N_FAMILIES
from ..core.encode import Field, Layout, deck_less_hand, put_cards, put_seat_or_none
from ..core.state import (
    CUR, LANDLORD, LAST_ROW, LAST_SEAT, NREDEAL, PHASE, P_DONE, P_PLAY, hand_off, kitty_off,
    played_off,
)
from .niangniang_layout import (
    A_HANDNO, A_NRET, A_NTAKE, A_PENDING, FAST, JB, JR, N_EXCH, N_REC, NNAT, NP, NR, O_MAXHANDS,
    O_TARGET, P_JOKER, P_REVEAL, PHASE_NAMES, X_LAST, X_LJ, X_NREC, X_OFFER, X_PJ, X_PLACE,
    X_REC, X_RET, X_SCORE, X_STOOD, X_TAKEN, X_TOTAL,
)

(F_HAND, F_TAKEN, F_RETURNED, F_BOTTOM, F_PLAYED, F_JOKERS, F_OTHERS, F_SIZES, F_BEAT,
 F_BEAT_TYPE, F_BEAT_SEAT, F_BEAT_JOKERS, F_RECENT, F_NN, F_PLACE, F_STUCK, F_EXCH, F_PENDING,
 F_PENDING_J, F_REVEAL, F_TOTALS, F_LAST, F_HANDS, F_TURN, F_PHASE) = range(25)
D = 4  # planes of a card set (a hand holds at most 4 of a rank)
E = 6  # planes of an effective play (bombs of up to 6 cards)
DJ = 2  # planes of joker stand-ins (two jokers)
REC_SIZE = NR * E + NNAT * DJ + 1 + NP


def obs_layout() -> Layout:
    """The observation fields, in order.  Relative seats: 0 = the observer, 1 = next (下家)..."""
    n = NP
    C = NR * D
    CE = NR * E
    CJ = NNAT * DJ
    cards = f"{NR} ranks x {D} planes, bit r*{D}+k-1 set when holding >= k of rank r"
    eff = f"{NR} ranks x {E} planes (an effective play: jokers counted as the rank they stand for)"
    jk = f"{NNAT} natural ranks x {DJ} planes: how many jokers stood for each rank"
    return Layout([
        Field("hand", C, f"own hand ({cards}; rank index 0 = the lowest rank, 13 = B, 14 = R)"),
        Field("taken", C, "cards the 娘娘 took from the bottom: the 娘娘 of this hand; every other "
                          "seat sees the last finished hand's (zeros before a hand is over)"),
        Field("returned", C, "cards the 娘娘 returned: likewise"),
        Field("bottom", C, "the bottom (14 cards): the 娘娘 of this hand from the exchange on; every "
                           "other seat the last finished hand's"),
        Field("played", n * C, "physical cards played so far this hand by each relative seat "
                               "(jokers as B / R)"),
        Field("jokers_for", n * CJ, f"per relative seat, the ranks its played jokers stood for ({jk})"),
        Field("others", C, "cards the observer has not seen: not in his hand, not played, and "
                           "for the 娘娘 not in the bottom"),
        Field("hand_sizes", n, "cards in hand per relative seat / 14"),
        Field("to_beat", CE, f"the play to beat ({eff}); zeros on a free lead"),
        Field("to_beat_type", N_FAMILIES, "one-hot family of the play to beat (combos.FAMILY_NAMES)"),
        Field("to_beat_seat", n, "one-hot relative seat of the play to beat"),
        Field("to_beat_jokers", CJ, f"what the jokers of the play to beat stood for ({jk})"),
        Field("recent", N_REC * REC_SIZE,
              f"last {N_REC} moves of the hand, most recent first; each: effective cards ({CE}), "
              f"joker stand-ins ({CJ}), pass flag (1), relative seat one-hot ({n}); zeros when absent"),
        Field("niangniang", n + 1, "one-hot relative seat of the 娘娘; last slot: not decided yet"),
        Field("place", n * (n + 1), "per relative seat one-hot place: active, 1st, 2nd, 3rd, 4th"),
        Field("stuck", n, "per relative seat: 1 when stuck (only one joker left)"),
        Field("exchange", 2, "cards taken / 4, cards returned / 4"),
        Field("pending", CE, "the observer's own play awaiting its joker choice (effective cards)"),
        Field("pending_jokers", CJ, "the stand-ins chosen so far for that play"),
        Field("reveal", 5, "亮3 draw: draw number one-hot (4), 3s offered so far in it / 4"),
        Field("totals", n, "match totals per relative seat, (total + target) / (2 target), clipped"),
        Field("last_scores", n, "scores of the last finished hand per relative seat, (s + 24) / 48, clipped"),
        Field("hands_played", 1, "finished hands / max_hands"),
        Field("turn", n, "one-hot relative seat to move"),
        Field("phase", len(PHASE_NAMES), "one-hot phase: " + ", ".join(PHASE_NAMES)
              + " (the joker follow-up is seen as the play phase by every seat but the mover)"),
    ])


@njit(**FAST)
def _is_stuck(s, q):
    """Placed while holding one joker only (the last active player is never in that state)."""
    if s[X_PLACE + q] == 0:
        return False
    ho = hand_off(q)
    left = 0
    for r in range(16):
        left += s[ho + r]
    return left == 1 and s[ho + JB] + s[ho + JR] == 1


@njit(cache=True)
def _put_effective(out, off, tab, t):
    put_cards(out, off, tab.counts[t], NR, E)


@njit(cache=True)
def _put_jokers(out, off, s, base):
    put_cards(out, off, s[base:base + 16], NNAT, DJ)


@njit(cache=True)
def _clip01(x):
    return min(1.0, max(0.0, x))


@njit(cache=True)
def encode(s, seat, tab, o, off, out):
    """Write ``seat``'s observation into ``out`` (float32, zeroed here)."""
    n = NP
    out[:] = 0.0
    ho = hand_off(seat)
    ko = kitty_off(n)
    put_cards(out, off[F_HAND], s[ho:ho + 16], NR, D)
    nn = s[LANDLORD]
    ph = s[PHASE]
    over = ph == P_DONE
    is_nn = seat == nn and nn >= 0
    if is_nn and ph != P_REVEAL and not over:  # his own exchange of this hand
        put_cards(out, off[F_TAKEN], s[X_TAKEN:X_TAKEN + 16], NR, D)
        put_cards(out, off[F_RETURNED], s[X_RET:X_RET + 16], NR, D)
        put_cards(out, off[F_BOTTOM], s[ko:ko + 16], NR, D)
    elif s[A_HANDNO] > 0:  # public once a hand is over: the last finished hand's
        put_cards(out, off[F_TAKEN], s[X_LAST:X_LAST + 16], NR, D)
        put_cards(out, off[F_RETURNED], s[X_LAST + 16:X_LAST + 32], NR, D)
        put_cards(out, off[F_BOTTOM], s[X_LAST + 32:X_LAST + 48], NR, D)
    others = deck_less_hand(s, ho, NNAT, 4, 1)
    if is_nn and ph != P_REVEAL:
        for r in range(16):
            others[r] -= s[ko + r]
    C = NR * D
    CJ = NNAT * DJ
    for k in range(n):
        q = (seat + k) % n
        po = played_off(n, q)
        put_cards(out, off[F_PLAYED] + k * C, s[po:po + 16], NR, D)
        _put_jokers(out, off[F_JOKERS] + k * CJ, s, X_STOOD + 16 * q)
        sz = 0
        for r in range(16):
            others[r] -= s[po + r]
            sz += s[hand_off(q) + r]
        out[off[F_SIZES] + k] = sz / 14.0
        pl = s[X_PLACE + q]
        out[off[F_PLACE] + k * (n + 1) + pl] = 1.0
        if _is_stuck(s, q):
            out[off[F_STUCK] + k] = 1.0
    for r in range(16):
        others[r] = max(others[r], 0)
    put_cards(out, off[F_OTHERS], others, NR, D)
    prev = s[LAST_ROW]
    if (ph == P_PLAY or ph == P_JOKER) and prev >= 0:
        _put_effective(out, off[F_BEAT], tab, prev)
        out[off[F_BEAT_TYPE] + tab.family[prev]] = 1.0
        out[off[F_BEAT_SEAT] + (s[LAST_SEAT] - seat) % n] = 1.0
        _put_jokers(out, off[F_BEAT_JOKERS], s, X_LJ)
    m = s[X_NREC]
    for j in range(min(m, N_REC)):
        i = (m - 1 - j) % N_REC
        b = X_REC + 4 * i
        base = off[F_RECENT] + j * REC_SIZE
        row = s[b + 1]
        if row < 0:
            out[base + NR * E + CJ] = 1.0
        else:
            _put_effective(out, base, tab, row)
            for jj in range(2):
                jr = s[b + 2 + jj]
                if jr >= 0:
                    out[base + NR * E + jr * DJ + jj] = 1.0
        out[base + NR * E + CJ + 1 + (s[b] - seat) % n] = 1.0
    put_seat_or_none(out, off[F_NN], nn, seat, n)
    out[off[F_EXCH]] = s[A_NTAKE] / N_EXCH
    out[off[F_EXCH] + 1] = s[A_NRET] / N_EXCH
    if ph == P_JOKER and seat == s[CUR]:
        _put_effective(out, off[F_PENDING], tab, s[A_PENDING])
        _put_jokers(out, off[F_PENDING_J], s, X_PJ)
    if ph == P_REVEAL:
        out[off[F_REVEAL] + min(s[NREDEAL], 3)] = 1.0
        out[off[F_REVEAL] + 4] = s[X_OFFER] / 4.0
    tg = o[O_TARGET]
    for k in range(n):
        q = (seat + k) % n
        out[off[F_TOTALS] + k] = _clip01((s[X_TOTAL + q] + tg) / (2.0 * tg))
        if s[A_HANDNO] > 0:
            out[off[F_LAST] + k] = _clip01((s[X_SCORE + q] + 24) / 48.0)
    out[off[F_HANDS]] = _clip01(s[A_HANDNO] / o[O_MAXHANDS])
    if ph != P_DONE:
        out[off[F_TURN] + (s[CUR] - seat) % n] = 1.0
    if ph == P_JOKER and seat != s[CUR]:
        # the follow-up is the mover's secret: every other seat sees the play phase (the
        # position before he chose his play) until the play goes down with its stand-ins
        ph = P_PLAY
    out[off[F_PHASE] + ph] = 1.0
