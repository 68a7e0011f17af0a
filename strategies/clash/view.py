"""What the Clash of Steel engine hands a strategy: the card and table enums
both name, and the layout of the *view*.

``sims.clash`` writes one view per seat (a float vector holding only what that
seat may know: its own cards and stamina, the public state, the opponent's
face-up cards and its revealed history; ruling C4) and the kernel
(``strategies.clash``) reads it; both import the enums and the layout from
here, so they are written once, on the engine's side of the interface
(``sims`` → ``strategies`` → ``kernels``: the strategy cannot import the
engine). ``STANCE_MOD`` is the rulebook's stance modifier (C6), which the
engine applies and a strategy weighs.
"""

import numpy as np

# --- card and table enums -----------------------------------------------------
AXE, DAGGER, SHIELD, SPEAR, SWORD = 0, 1, 2, 3, 4
NO_ITEM = 5  # index of "no item played" in the modifier table
ARMOR, FEINT, SECOND_WIND = 0, 1, 2
QUICK, NEUTRAL, STRONG = 0, 1, 2
ATTACK, DEFEND, MOVE = 0, 1, 2
HIGH, MID, LOW = 0, 1, 2
HEAD, TORSO, LEGS = 0, 1, 2
HAND, ARM, STEP, REACH = 0, 1, 2, 3
T_STANCE, T_ITEM, T_ACTION, T_TARGET = 0, 1, 2, 3
NOT_PLAYED = -2  # a card of mine not played yet this round (-1: no item / hidden)

# --- the view: what one seat may know (written by the engine) ----------------
V_RANGE = 0
V_INIT = 1  # 1 if this seat holds the initiative
V_ROUND = 2  # 0-based round (the bid: number of tied bids so far)
V_MY_N = 3  # my stamina cards (hand; during a round, not counting played cards)
V_OPP_N = 4  # the opponent's stamina cards (public: discards are open)
V_HAND = 5  # 5: my hand, count of each value 1..5
V_DISC = 10  # 5: my discard pile, count of each value 1..5
V_MY_WOUND = 15  # 3: Head, Torso, Legs held (0/1)
V_OPP_WOUND = 18  # 3
V_MY_ITEM = 21  # 2: my item ids
V_MY_AVAIL = 23  # 2: 1 if not disarmed
V_OPP_ITEM = 25  # 2: the opponent's item ids (revealed after the bid, C3)
V_OPP_AVAIL = 27  # 2
V_MY_MAN = 29  # my maneuver id
V_MY_MAN_LEFT = 30  # 1 while my maneuver is unused
V_MY_CARD = 31  # 4: my cards this round (stance, item, action, target); -2 not yet, -1 no item
V_OPP_CARD = 35  # 4: the opponent's face-up cards this round, -1 hidden / none
V_MY_STAM = 39  # sum of the stamina I played this round (0 before)
V_OPP_ACT = 40  # 3: opponent's revealed actions so far (counts)
V_OPP_ATK_TGT = 43  # 3: targets of its revealed Attacks
V_OPP_DEF_TGT = 46  # 3: targets of its revealed Defends
V_OPP_STAM = 49  # sum of its revealed stamina plays
V_OPP_ROUNDS = 50  # rounds it has revealed
V_OPP_STANCE = 51  # 3: its revealed stances
V_EDGE = 54  # 16: per range r, my_atk, my_def, opp_atk, opp_def at V_EDGE + 4r (``refresh_view``)
V_AVG = 70  # 72: my item's modifier against the opponent's available items, averaged,
#           at V_AVG + (action * 6 + item) * 4 + range (``refresh_view``)
N_VIEW = V_AVG + 72

# C6: a stance's modifier to the action (Quick -1, Neutral 0, Strong +1)
STANCE_MOD = np.array([-1, 0, 1], dtype=np.int64)
