"""Lanxi Wulong's constants: ranks and sizes, phases and seat statuses, the slots of the state
vector and of the options vector the kernels read, the option values.

The rules and the engine's decisions are in :mod:`cardenvs.games.wulong`.
"""

from __future__ import annotations

from ..core.state import AUX0, state_size

ORDER = "3456789TJQKA2BR"
NP = 4
NR = 15  # ranks
NAT = 13  # natural ranks 3..2 (indices 0..12)
JB, JR = 13, 14  # rank slots of the small and the big joker
HAND = 25
N_UNUSED = 8
NCARDS = 108
MAX_DECLARE = 10  # 报牌 with at most this many cards
K_REC = 8  # recent play-phase events kept for the observation
NPICK = 2 * NAT + 1  # pick options: B[r], R[r], done

# phases (the core defines P_AUCTION=0 (unused here), P_PLAY=1, P_DONE=2)
P_WILD = 3
PHASE_NAMES = ("deal", "play", "done", "wilds")

# seat status
ST_ACTIVE, ST_OUT, ST_FAILED = 0, 1, 2  # active is 0: cardenvs.core.state.next_active
STATUS_NAMES = ("active", "out", "failed")

# -- state: header slots of this game (AUX0 is the core's PLAY_START) ------------------------
A_PASSED = AUX0 + 1  # bit q: seat q passed since the last play
A_NOUT = AUX0 + 2  # players out so far
A_NFAIL = AUX0 + 3  # players failed so far
A_LOSER = AUX0 + 4  # 末家 once fixed (-1 before)
A_DEALER = AUX0 + 5  # dealer (-1 unknown: a custom deal without suits)
A_LEADER = AUX0 + 6  # seat that made the first lead
A_NREC = AUX0 + 7  # play-phase events recorded (plays and passes)
A_PEND = AUX0 + 8  # row being realised in the wilds phase (-1 none)

# -- state: this game's region after the shared layout -----------------------------------------
EXT = state_size(NP)
X_PLEN = EXT  # picks made so far for the pending row
X_PSEQ = EXT + 1  # 4 pick codes: kind * 16 + rank (kind 0 = B, 1 = R)
X_DECL = EXT + 8  # 4: declared
X_STATUS = EXT + 12  # 4: ST_*
X_OUTPOS = EXT + 16  # 4: 1.. order of going out (0 = not out)
X_FAILPOS = EXT + 20  # 4: 1.. order of failing (0 = not failed)
X_LB = EXT + 24  # 13: small jokers standing for each rank in the play to beat
X_LR = EXT + 40  # 13: big jokers standing for each rank in the play to beat
X_PB = EXT + 56  # 13: small-joker picks so far for the pending row, per rank
X_PR = EXT + 72  # 13: big-joker picks so far
X_REC = EXT + 88  # K_REC events of EV slots: seat, row (-1 pass), B per rank (13), R per rank (13)
EV = 32
STATE_SIZE = X_REC + K_REC * EV

# -- options vector (read by the kernels) ------------------------------------------------------
(O_PASS, O_DECL, O_PICKB, O_PICKR, O_DONE, O_WB, O_WR, O_MUST, O_COMPLETE, O_REWARD, O_NRANKS,
 O_DEPTH, O_RECENT, O_T, O_JALL, O_WSLOTS, O_SUIT0) = range(17)
O_LK = 21  # where the lookups of gen_rows start
N_OPTS = 22  # then WildRows.wfix, .over, .natmax (T each), then the lookups

MUST_MODES = ("seed", "one", "all")
WILD_MODES = ("both", "big_only", "none")
JOKER_ORDERS = ("big_over_small", "first_played")
#: suit search order of the first lead (indices into SUITS = "SHCD")
FIRST_LEAD_SUITS = {"S3": (0, 2, 1, 3), "C3": (2, 0, 1, 3)}
