"""What the Tosk engine hands a strategy: the layout of the observable state.

``sims.tosk`` writes this float vector (``info``) before every decision and
the kernel (``strategies.tosk``) reads it; both import the layout from here,
so it is written once. It holds only what the deciding seat may know (ruling
T12): both HP, the card counts, the rules' limits and the opponent's revealed
plays. The candidates themselves (cost, ATK, DEF of each legal play) come as
arrays beside it.
"""

I_MY_HP = 0
I_OPP_HP = 1
I_START_HP = 2
I_MY_HAND = 3
I_OPP_HAND = 4
I_DECK = 5
I_DISCARD = 6
I_CAPACITY = 7
I_MAX_HAND = 8
I_ROUND = 9
I_OPP_REVEALS = 10  # rounds the opponent has revealed so far
I_OPP_ATK_SUM = 11  # sum of the opponent's revealed ATK
I_OPP_DEF_SUM = 12
I_OPP_LAST_ATK = 13
I_OPP_LAST_DEF = 14
I_HEAL_CARDS = 15
I_HEAL_PER_CARD = 16
N_INFO = 17
