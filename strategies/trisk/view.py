"""What the Trisk engine hands a strategy: the columns of the feature rows.

For each decision ``sims.trisk`` enumerates the legal candidates and writes
one row per candidate, one column per feature below, in this order, computed
from what the deciding player may know; the kernel (``strategies.trisk``)
scores the rows with the weights of the matching TOML section. Both import the
tables from here, so the columns are written once; the engine names the
columns of the Creation phase's rows by ``PF_*``.
"""

PRIMAL_FEATURES = (
    ("meditate", "1 for Meditate"),
    ("muster", "1 for Muster"),
    ("train", "1 for Train"),
    ("level_gain", "levels a Train adds to its creation"),
    ("unlock_attack", "the Train unlocks the creation's Attack"),
    ("unlock_ability", "abilities the Train unlocks"),
    ("enables_upgrade", "the Train lets an Upgrade in hand go onto the creation"),
    ("primal_low", "Meditate x levels the Primal still lacks (10 - level)"),
    ("primal_attack", "the Meditate unlocks the Primal's Attack"),
    ("hand_room", "Muster x free hand places / hand limit"),
    ("hand_empty", "Muster with an empty hand"),
    ("wasted", "the action does nothing (full hand or empty deck, level already 10)"),
    ("train_ap", "Train x the creation's AP"),
    ("creations", "Meditate x my creations in play"),
    ("nothing_to_play", "Muster when no card in hand can be played"),
)
PLAY_FEATURES = (
    ("stop", "1 for ending the Creation phase"),
    ("create", "1 for creating a creation"),
    ("upgrade", "1 for an Upgrade"),
    ("blessing", "1 for casting a Blessing"),
    ("curse", "1 for casting a Curse"),
    ("ritual", "1 for casting a Ritual"),
    ("ability", "1 for using an active ability"),
    ("ap_gain", "AP added to my side (a creation's AP; an Upgrade's AP gain)"),
    ("hp_gain", "HP added to my side"),
    ("board_gap", "Create x (enemy creations - my creations)"),
    ("dmg_creature", "expected damage to enemy creations (up to what they have left)"),
    ("kills", "expected enemy creations destroyed"),
    ("dmg_primal", "expected damage to the enemy Primal"),
    ("disable", "expected Feared/Blinded/Asleep tokens on enemy creations that have AP"),
    ("poison", "expected Poisoned tokens on enemy cards"),
    ("silence", "expected Silenced tokens on enemies with active abilities"),
    ("heal", "expected damage healed on my cards"),
    ("levels", "expected levels gained by my cards"),
    ("draw", "expected cards drawn"),
    ("cleanse", "expected status tokens removed from my cards"),
    ("flying", "Flying tokens given to my creations that can attack and lack Flying"),
    ("self_sleep", "Asleep tokens put on my own cards"),
    ("sacrifice", "AP + HP left of the creation a Ritual sacrifices"),
    ("lost_attack", "AP of a creation that could attack this turn and uses an ability"),
    ("target_ap", "AP of the enemy creation targeted"),
    ("wasted", "the play has no effect"),
    ("lethal", "the play is expected to bring the enemy Primal down"),
)
ATTACK_FEATURES = (  # score of attacking (holding back scores 0)
    ("bias", "every attack"),
    ("ap", "the attacker's AP"),
    ("safe", "no enemy creation can block it"),
    ("blockers", "enemy creations that can block it"),
    ("primal", "1 for the Primal"),
    ("lethal", "my unblockable damage reaches the enemy Primal's HP left"),
    ("behind", "(my Primal's damage - the enemy Primal's) / 10"),
)
BLOCK_FEATURES = (
    ("none", "1 for not blocking this attacker"),
    ("prevented", "damage to my Primal the block prevents"),
    ("dies", "the blocker is destroyed"),
    ("blocker_value", "AP + HP left of a blocker that is destroyed"),
    ("danger", "prevented x 1 if the unblocked attacks would bring my Primal down"),
    ("absorb", "damage the blocker takes and survives"),
)
NPR, NPL, NAT, NBL = (
    len(PRIMAL_FEATURES),
    len(PLAY_FEATURES),
    len(ATTACK_FEATURES),
    len(BLOCK_FEATURES),
)

# the columns of PLAY_FEATURES, as the engine writes them
(
    PF_STOP,
    PF_CREATE,
    PF_UPGRADE,
    PF_BLESSING,
    PF_CURSE,
    PF_RITUAL,
    PF_ABILITY,
    PF_AP_GAIN,
    PF_HP_GAIN,
    PF_BOARD_GAP,
    PF_DMG_CREATURE,
    PF_KILLS,
    PF_DMG_PRIMAL,
    PF_DISABLE,
    PF_POISON,
    PF_SILENCE,
    PF_HEAL,
    PF_LEVELS,
    PF_DRAW,
    PF_CLEANSE,
    PF_FLYING,
    PF_SELF_SLEEP,
    PF_SACRIFICE,
    PF_LOST_ATTACK,
    PF_TARGET_AP,
    PF_WASTED,
    PF_LETHAL,
) = range(NPL)
