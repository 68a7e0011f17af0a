"""Trisk's card table: how a card set (``configs/trisk/cards.toml``) is encoded
as numbers for the engine (rulebook ``rules/trisk.txt``, rulings R1–R7).

A card set is an int64 table, one row per card, columns ``C_*`` below. The
engine never sees names or strings: ``balance.games.trisk.cards`` reads and validates
the TOML file and builds this table; the engine reads only these columns.
Finishes (Common, Radiant, Signed) are cosmetic and are not in the table.

Every ability of a card (the Attack aside, which is ``C_ATTACK_LEVEL``) takes
one block of ``A_W`` columns from ``C_ABIL``; a Sorcery's effect is its block 0
with shape ``SHAPE_SPELL``. The Skill Book is the vocabulary of effects
(``E_*``) the engine implements; ``EFFECTS`` describes each one.
"""

# ---- card types and sorcery kinds ---------------------------------------------
PRIMAL, CREATION, UPGRADE, SORCERY = 0, 1, 2, 3
TYPES = ("Primal", "Creation", "Upgrade", "Sorcery")
BLESSING, CURSE, RITUAL = 0, 1, 2  # C_KIND of a Sorcery
SORCERY_KINDS = ("Blessing", "Curse", "Ritual")

# ---- statuses (token stacks, rulebook "Status effects") -----------------------
FEARED, BLINDED, ASLEEP, POISONED, SILENCED, FLYING = 0, 1, 2, 3, 4, 5
STATUSES = ("Feared", "Blinded", "Asleep", "Poisoned", "Silenced", "Flying")
N_STATUS = 6

# ---- damage types (bit i of C_RESIST / C_WEAK) --------------------------------
PHYSICAL, FIRE, FROST, LIGHTNING, ARCANE = 0, 1, 2, 3, 4
DAMAGE_TYPES = ("physical", "fire", "frost", "lightning", "arcane")
UNTYPED = -1  # poison ticks: no resist, weak or armor applies

# ---- ability shapes -------------------------------------------------------------
SHAPE_ACTIVE, SHAPE_PASSIVE, SHAPE_SPELL = 1, 2, 3
SHAPES = {"active": SHAPE_ACTIVE, "passive": SHAPE_PASSIVE, "spell": SHAPE_SPELL}

# ---- effects: the Skill Book's vocabulary --------------------------------------
E_STATUS = 0  # put N tokens of status A_PARAM on the target
E_HEAL = 1  # remove N damage from the target (never below 0)
E_DAMAGE = 2  # deal N damage of type A_PARAM to the target (resist, weak, armor apply)
E_CLEANSE = 3  # remove N tokens of every status but Flying from the target;
#                poison removed this way deals nothing, sleep removed still heals 1 each
E_LEVEL = 4  # the target gains N levels (max 10)
E_DRAW = 5  # its player draws N cards (hand limit applies)
E_REGEN = 6  # passive: heals N at the end of its owner's turn
E_GROW = 7  # passive: gains N levels at the end of its owner's turn
E_WARD = 8  # passive: enemy curses and abilities cannot target it
E_PACK = 9  # passive: +N AP for every other creation of its group its owner controls
N_EFFECTS = 10
EFFECT_NAMES = (
    "status",
    "heal",
    "damage",
    "cleanse",
    "level",
    "draw",
    "regen",
    "grow",
    "ward",
    "pack",
)
PASSIVE_EFFECTS = (E_REGEN, E_GROW, E_WARD, E_PACK)

# ---- targets of an effect --------------------------------------------------------
T_SELF = 0  # the creation using the ability (actives and passives)
T_OWN_CREATION = 1  # one of its owner's creations (a Blessing: the creation cast on)
T_ENEMY_CREATION = 2  # one enemy creation (a Curse: the creation cast on)
T_ENEMY_PRIMAL = 3
T_OWN_PRIMAL = 4
T_ALL_ENEMY_CREATIONS = 5
T_ENEMY_ANY = 6  # one enemy creation or the enemy Primal
T_PLAYER = 7  # the player (draw)
TARGETS = (
    "self",
    "own_creation",
    "enemy_creation",
    "enemy_primal",
    "own_primal",
    "all_enemy_creations",
    "enemy_any",
    "player",
)

# ---- coin gates -------------------------------------------------------------------
COIN_NONE, COIN_ONE, COIN_PER_GROUP = 0, 1, 2  # PER_GROUP: one coin per creation of
#                                              A_GROUP its owner controls; one heads is enough

X_AMOUNT = -1  # A_N = -1: the amount is X (Blessing/Curse: own Primal's MP; Ritual: the
#                sacrificed creation's MP; an ability: the creation's own MP)

# ---- columns of the card table ----------------------------------------------------
C_TYPE = 0  # PRIMAL / CREATION / UPGRADE / SORCERY
C_KIND = (
    1  # creation kind id (what an Upgrade goes onto); a Sorcery: BLESSING/CURSE/RITUAL; Primal: -1
)
C_ONTO = 2  # Upgrade: the kind id it goes onto; else -1
C_MIG = 3
C_CUN = 4
C_WIS = 5
C_HP = 6
C_AP = 7
C_MP = 8
C_ARMOR = 9  # shields: each ignores 1 physical damage
C_FLYING = 10  # 1 if it has the Flying attribute
C_RESIST = 11  # bit mask over DAMAGE_TYPES
C_WEAK = 12  # bit mask over DAMAGE_TYPES
C_ATTACK_LEVEL = 13  # level at which its Attack unlocks; -1 no Attack (a Primal: -1, never
#                      read: every Primal's unlocks at the rules key primal_attack_level)
C_GROUP = 14  # group id (Howl counts the Wolves you control); -1 none
C_N_ABIL = 15  # abilities in use (0..MAX_ABIL)
C_ABIL = 16  # first ability block
MAX_ABIL = 3
A_SHAPE = 0  # SHAPE_ACTIVE / SHAPE_PASSIVE / SHAPE_SPELL
A_LEVEL = 1  # level that unlocks it (a spell: 0)
A_EFFECT = 2  # E_*
A_TARGET = 3  # T_*
A_N = 4  # amount (tokens, damage, levels, cards); X_AMOUNT for X
A_PARAM = 5  # the status (E_STATUS) or the damage type (E_DAMAGE); else -1
A_COINS = 6  # COIN_*
A_GROUP = 7  # group counted by COIN_PER_GROUP; else -1
A_W = 8
CARD_W = C_ABIL + MAX_ABIL * A_W

MAX_LEVEL = 10
MAX_STAT = 9  # MIG, CUN, WIS range 0..9

# ---- the card fields play reads, by card type ------------------------------------------
# The fields of a card in a card set's TOML (besides its identity: id, name,
# set, finishes, type, text) that change play, per card type: the engine reads
# them from the table's columns above (HP, AP, MP, Armor, Flying, resist, weak,
# the Attack level, the group, the abilities, kind and onto), and the deck check
# reads MIG, CUN and WIS ("A card can be played only if none of its MIG, CUN or
# WIS is higher than your Primal's"). A field not listed for a type would do
# nothing: the loader refuses it on that type and a repair never offers it as a
# move (balance.games.trisk.repair derives its card moves from this table).
# A Primal: its Attack unlocks at one level for every Primal ("At level 10 its
# Attack unlocks", the rules key primal_attack_level), so its card has no
# attack; only creations use abilities ("Use one active ability on each
# creation"; the end-of-turn passives act on creations) and are counted in a
# group (Howl, Pack: "every Wolf you control"), so it has neither.
_BODY = ("mig", "cun", "wis", "hp", "ap", "mp", "armor", "flying", "resist", "weak")
_CREATION = (*_BODY, "attack", "group", "abilities", "kind")
READ_FIELDS = {
    "Primal": _BODY,
    "Creation": _CREATION,
    "Upgrade": (*_CREATION, "onto"),
    "Sorcery": ("kind", "spell"),
}
