"""打娘娘 Da Niangniang: the numbers its kernels share.

Sizes and rank slots, the phases, the game's header slots (``A_*``) and state region (``X_*``)
after the shared layout (:mod:`cardenvs.core.state`), the options vector (``O_*``) the kernels
read, and the numba options of the kernels that never allocate.  The rules are in the
docstring of :mod:`cardenvs.games.niangniang`.
"""

from __future__ import annotations

from ..core.state import AUX0, state_size

NP = 4
NR = 15  # rank slots: 13 naturals, B, R
NNAT = 13
JB, JR = 13, 14  # joker slots
HAND = 10
BOTTOM = 14
N_EXCH = 4
NCARDS = 54
ORDERS = {"standard": "3456789TJQKA2BR", "three_high": "456789TJQKA23BR"}

# phases (core: 0 = auction (here: the 亮3 reveal choice), 1 = play, 2 = done)
P_REVEAL, P_TAKE, P_RETURN, P_JOKER = 0, 3, 4, 5
PHASE_NAMES = ("reveal", "play", "done", "take", "return", "joker")

# -- header slots of this game (AUX0 is PLAY_START) ------------------------------------------
A_NTAKE = AUX0 + 1  # cards taken in the exchange
A_NRET = AUX0 + 2  # cards returned
A_PASSED = AUX0 + 3  # bit mask of seats that passed since the last play
A_NTOP = AUX0 + 4  # places filled from the top (players out)
A_NSTUCK = AUX0 + 5  # places filled from the bottom (stuck players)
A_PENDING = AUX0 + 6  # row of the play awaiting its joker realisation, -1 none
A_JMIN = AUX0 + 7  # lowest rank the next voluntary joker may stand for
A_HANDNO = AUX0 + 8  # hands finished in this episode (match)
# NREDEAL: draws redone in the reveal choice; FIRST: the seat that led the hand first

# -- this game's state region after the shared layout --------------------------------------------
EXT = state_size(NP)
X_PLACE = EXT  # 4: place of each seat (0 = still active, 1..4)
X_THREES = EXT + 4  # 4: seats receiving the four 3s of the draw, in deal order
X_OFFER = EXT + 8  # which of the four 3s is offered now (reveal_choice)
X_TRUNC = EXT + 9  # 1 when a match ended by max_hands
X_NREC = EXT + 10  # moves recorded this hand (recent ring)
X_ORIG = EXT + 16  # 16: the 娘娘's 10 dealt cards
X_TAKEN = EXT + 32  # 16: cards he took from the bottom
X_RET = EXT + 48  # 16: cards he returned
X_PJ = EXT + 64  # 16: ranks the jokers of the pending play stand for (counts)
X_LJ = EXT + 80  # 16: the same for the play to beat
X_STOOD = EXT + 96  # 4 x 16: ranks each seat's played jokers stood for
X_TOTAL = EXT + 160  # 4: match totals
X_SCORE = EXT + 164  # 4: scores of the last finished hand
X_LPLACE = EXT + 168  # 4: places of the last finished hand
N_REC = 8
X_REC = EXT + 176  # N_REC x 4: (seat, row or -1 for pass, stood-for rank 1, rank 2) ring
X_LAST = X_REC + 4 * N_REC  # 3 x 16: taken, returned and bottom of the last finished hand
STATE_SIZE = X_LAST + 48

# -- options vector ---------------------------------------------------------------------------
(O_PASS, O_REVEAL0, O_TAKE0, O_RET0, O_JOKER0, O_FIRSTNN, O_BOMBSONLY, O_SCORING, O_HZSCOPE,
 O_HZWHEN, O_MATCH, O_TARGET, O_MAXHANDS, O_REWARD, O_THREE, O_DEAD, O_JALL, O_WSLOTS,
 O_T) = range(19)
N_OPTS = 20  # then wfix[T], over[T], natmax[T] (cardenvs.core.wild.WildRows)
FIRST_NN = ("first_three", "reveal_choice", "random_seat")
SCORINGS = ("seed", "positional", "zero_sum")
HZ_WHEN = ("always", "last", "never")

#: numba options of the kernels that never allocate: without numba's reference-counting runtime
#: a call does not pay an atomic increment and decrement for each of the play table's arrays
FAST = dict(cache=True, _nrt=False)
