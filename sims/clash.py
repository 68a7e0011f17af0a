"""Clash of Steel: the rules engine (rulebook ``rules/clash-of-steel.txt``,
rulings C1–C15).

State is plain numpy arrays; the rules are an int64 vector (``RULES``);
``simulate`` plays deals in parallel, each twice with seats swapped, and
returns per-game outcome arrays. Only numbers cross this boundary. The rules
have no chance (C14): the only randomness is the strategies' own mixed
choices, drawn from per-seat streams ``(seed, deal, PURPOSE_SEAT0 + seat)``.

Each side's loadout (2 items + 1 maneuver, C1) is element 0 of its strategy
vector (``strategies.clash.encode_strategy(spec, Side(loadout=i))``), an index
into ``ALL_LOADOUTS``.

Rules vector: ``RULES`` below, one ``Rule`` per key (its default, bounds and
meaning), in vector order.

Other decided points (no rule knob; docs/rulings.md says why): when a player
who was not hit would discard its last card (C9), it keeps the highest of the
cards it would discard. Second Wind (C13) is used in the discard step and
returns the highest discarded card (of value at most ``second_wind_max``, a
repair key; 5 as printed). Armor (C10) is offered only against a wound of a
kind not yet held (a repeat wound has no penalty to negate). Every player must
play an available item (C5). The bid's view hides the opponent's
items: they are revealed only once the initiative is decided (C3).
"""

import numpy as np

from kernels import rng
from kernels.aggregate import pair_outcomes
from kernels.contract import Rule, rule_tables
from kernels.jit import chunked, leaf, njit
from kernels.trace import track_score
from strategies.clash import (
    P_LOADOUT,
    SCRATCH,
    choose_bid,
    choose_card,
    choose_feint,
    choose_range,
    choose_retrieve,
    choose_stamina,
    choose_wait,
    refresh_view,
    use_armor,
    use_second_wind,
)
from strategies.clash.view import (  # noqa: F401  (card enums re-exported)
    ARM,
    ARMOR,
    ATTACK,
    AXE,
    DAGGER,
    DEFEND,
    FEINT,
    HAND,
    HEAD,
    HIGH,
    LEGS,
    LOW,
    MID,
    MOVE,
    N_VIEW,
    NEUTRAL,
    NO_ITEM,
    NOT_PLAYED,
    QUICK,
    REACH,
    SECOND_WIND,
    SHIELD,
    SPEAR,
    STANCE_MOD,
    STEP,
    STRONG,
    SWORD,
    T_ACTION,
    T_ITEM,
    T_STANCE,
    T_TARGET,
    TORSO,
    V_DISC,
    V_HAND,
    V_INIT,
    V_MY_AVAIL,
    V_MY_CARD,
    V_MY_ITEM,
    V_MY_MAN,
    V_MY_MAN_LEFT,
    V_MY_N,
    V_MY_STAM,
    V_MY_WOUND,
    V_OPP_ACT,
    V_OPP_ATK_TGT,
    V_OPP_AVAIL,
    V_OPP_CARD,
    V_OPP_DEF_TGT,
    V_OPP_ITEM,
    V_OPP_N,
    V_OPP_ROUNDS,
    V_OPP_STAM,
    V_OPP_STANCE,
    V_OPP_WOUND,
    V_RANGE,
    V_ROUND,
)

GAME = "clash"
# bump whenever simulated behaviour changes (1.2.0: issue 13 rulings; 1.3.0: the
# Spear's "+1 Attack against all other weapons" no longer counts a Shield, C7
# corrected, key spear_vs_shield)
VERSION = "1.3.0"

ITEMS = ("Axe", "Dagger", "Shield", "Spear", "Sword")
MANEUVERS = ("Armor", "Feint", "Second Wind")
STANCES = ("Quick", "Neutral", "Strong")
ACTIONS = ("Attack", "Defend", "Move")
TARGETS = ("High", "Mid", "Low")
WOUNDS = ("Head", "Torso", "Legs")
RANGES = ("Hand", "Arm", "Step", "Reach")


def _loadouts():
    legal, illegal = [], []
    for i in range(5):
        for j in range(i + 1, 5):
            for m in range(3):
                (illegal if (i, j) == (SHIELD, SPEAR) else legal).append((i, j, m))
    return legal, illegal


# C1: the 27 loadouts legal by default, in a fixed order (item pairs in index
# order, then the maneuver); ALL_LOADOUTS appends the 3 Shield+Spear ones
# (indices 27..29), legal only with ``allow_shield_spear``.
LOADOUTS, _SHIELD_SPEAR = _loadouts()
ALL_LOADOUTS = LOADOUTS + _SHIELD_SPEAR
LOADOUT_TABLE = np.array(ALL_LOADOUTS, dtype=np.int64)


def loadout_name(i: int) -> str:
    """``'Axe+Sword/Feint'`` style name of loadout index ``i``."""
    a, b, m = ALL_LOADOUTS[int(i)]
    return f"{ITEMS[a]}+{ITEMS[b]}/{MANEUVERS[m]}"


def loadout_index(name: str) -> int:
    """Index of a loadout name as written by ``loadout_name`` (case-insensitive)."""
    key = name.strip().lower().replace(" ", "")
    for i in range(len(ALL_LOADOUTS)):
        if loadout_name(i).lower().replace(" ", "") == key:
            return i
    raise ValueError(f"unknown loadout '{name}'")


# what makes a loadout illegal, for error messages
LOADOUT_RULE = "C1: Shield with Spear needs allow_shield_spear = true"


def legal_loadouts(rules) -> list[int]:
    """Indices of the loadouts legal under ``rules`` (vector or dict)."""
    allow = rules["allow_shield_spear"] if isinstance(rules, dict) else rules[R_ALLOW_SHIELD_SPEAR]
    return list(range(len(ALL_LOADOUTS) if allow else len(LOADOUTS)))


# ---- rules vector ------------------------------------------------------------
# Every rules key, once: its default, bounds and meaning, in vector order.
RULES = (
    Rule("max_rounds", 60, 1, 10000, "C15: a game not decided after this many rounds is a draw"),
    Rule(
        "allow_shield_spear",
        False,
        None,
        None,
        "C1: Shield and Spear may form a loadout (false: illegal, 27 loadouts)",
    ),
    *(
        Rule(
            f"stamina_{v}",
            3,
            0,
            6,
            f"stamina cards of value {v} in each deck (3 each of 1..5: 15 cards)",
        )
        for v in range(1, 6)
    ),
    Rule(
        "hit_discard_stack_only",
        True,
        None,
        None,
        "C9: a hit player's extra discard is its highest card \"remaining in their "
        'hand" / "in your stack": the played cards are on the table, so one that '
        "would return is not a candidate while the stack holds a card (with the "
        "stack empty the returning card is the player's last, which a hit player "
        "loses); false: the old reading, the highest card left counting returning "
        "played cards",
    ),
    Rule(
        "spear_vs_spear",
        False,
        None,
        None,
        '[decided] Spear\'s "+1 Attack against any *other* item outside Hand" also '
        "applies against a played Spear (false: a Spear is not an other item, C7)",
    ),
    Rule(
        "feint_order",
        0,
        0,
        1,
        "[decided] 0: both decide on Feint at once from the face-up cards; 1: the "
        "initiative loser decides first, then the holder (who sees a face-up swap)",
    ),
    Rule(
        "bid_keeps_last",
        True,
        None,
        None,
        "[decided, CD4] C9 \"You can't discard your last Stamina card unless you were "
        'hit" holds in the bid: a won or tied bid that holds every card a player has '
        "left keeps its highest card, so no game ends in the bid; a tie that "
        "discards nothing (both bid their one last card, of equal value) cannot be "
        "broken by bidding again and a fair coin gives the initiative. false: the "
        "old reading, a tie that empties a player defeats it (both: a draw, "
        "``double_defeat``)",
    ),
    # C7's printed item modifiers, one key each (appended, so the earlier
    # indices keep their meaning): item_mod reads them in ITEM_MOD_KEYS order
    *(
        Rule(name, default, lo, hi, doc)
        for name, default, lo, hi, doc in (
            (
                "axe_vs_shield",
                1,
                -3,
                3,
                '[repair key] Axe: "+1 Attack vs Shields": added to an Axe Attack '
                "against a played Shield (C7)",
            ),
            (
                "axe_arm",
                1,
                -3,
                3,
                '[repair key] Axe: "+1 Attack and Defend in Arm Range": added to an '
                "Axe Attack or Defend at Arm (C7)",
            ),
            (
                "dagger_hand",
                2,
                -3,
                4,
                '[repair key] Dagger: "+2 Attack in Hand Range": added to a Dagger '
                "Attack at Hand (C7)",
            ),
            (
                "dagger_elsewhere",
                -1,
                -3,
                3,
                '[repair key] Dagger: "-1 Attack and Defend in all other Ranges": '
                "added to a Dagger Attack or Defend at Arm, Step and Reach (C7)",
            ),
            (
                "shield_defend",
                1,
                -3,
                3,
                '[repair key] Shield: "+1 all Defends": added to every Shield Defend (C7)',
            ),
            (
                "shield_vs_spear",
                1,
                -3,
                3,
                '[repair key] Shield: "+1 to Defend against Spears": added to a Shield '
                "Defend against a played Spear, on top of shield_defend (C7)",
            ),
            (
                "spear_reach",
                1,
                -3,
                3,
                '[repair key] Spear: "+1 Attack and Defend in Reach Range": added to a '
                "Spear Attack or Defend at Reach (C7)",
            ),
            (
                "spear_vs_items",
                1,
                -3,
                3,
                '[repair key] Spear: "+1 Attack against all other weapons outside of '
                'Hand Range": added to a Spear Attack outside Hand against a played '
                "Axe, Dagger or Sword (a Spear only with spear_vs_spear, a Shield only "
                "with spear_vs_shield; C7)",
            ),
            (
                "sword_step",
                1,
                -3,
                3,
                '[repair key] Sword: "+1 Attack and Defend in Step Range": added to a '
                "Sword Attack or Defend at Step (C7)",
            ),
            (
                "sword_vs_axe",
                1,
                -3,
                3,
                '[repair key] Sword: "+1 Attack vs Axe": added to a Sword Attack '
                "against a played Axe (C7)",
            ),
        )
    ),
    Rule(
        "second_wind_max",
        5,
        1,
        5,
        "[repair key] Second Wind returns the highest discarded Stamina card of value "
        "at most this (5: any card, as printed: 'returning one of your discarded "
        "Stamina card of your choice'); with no such card discarded it is not used "
        "(C13)",
    ),
    # appended, so every earlier index keeps its meaning
    Rule(
        "spear_vs_shield",
        False,
        None,
        None,
        "[decided, C7] Spear's \"+1 Attack against all other weapons outside of Hand "
        'Range" also applies against a played Shield (false: a Shield is not a weapon; '
        "the bonus counts a played Axe, Dagger or Sword only; true: the reading before "
        "engine 1.3.0, variant spear-vs-shield)",
    ),
)
RULE_FIELDS, DEFAULT_RULES, RULE_LIMITS = rule_tables(RULES)
(
    R_MAX_ROUNDS,
    R_ALLOW_SHIELD_SPEAR,
    R_STAMINA,
    _,
    _,
    _,
    _,
    R_HIT_STACK_ONLY,
    R_SPEAR_VS_SPEAR,
    R_FEINT_ORDER,
    R_BID_KEEPS_LAST,
    R_ITEM_MODS,
    *_,
    R_SECOND_WIND_MAX,
    R_SPEAR_VS_SHIELD,
) = range(len(RULE_FIELDS))
# the item modifier keys (C7), in the order of ``item_mod``'s ``mods``, and
# their printed values (the defaults)
ITEM_MOD_KEYS = RULE_FIELDS[R_ITEM_MODS:R_SECOND_WIND_MAX]
N_ITEM_MODS = len(ITEM_MOD_KEYS)
PRINTED_ITEM_MODS = np.array([DEFAULT_RULES[k] for k in ITEM_MOD_KEYS], dtype=np.int64)
(
    M_AXE_VS_SHIELD,
    M_AXE_ARM,
    M_DAGGER_HAND,
    M_DAGGER_ELSEWHERE,
    M_SHIELD_DEFEND,
    M_SHIELD_VS_SPEAR,
    M_SPEAR_REACH,
    M_SPEAR_VS_ITEMS,
    M_SWORD_STEP,
    M_SWORD_VS_AXE,
) = range(N_ITEM_MODS)


def max_length(rules: dict) -> int:
    """The most rounds a game can last under ``rules`` (rules keys; missing
    ones take their defaults): the width of the runner's game-length
    histogram."""
    return int({**DEFAULT_RULES, **rules}["max_rounds"])


def check_rules(cfg: dict) -> list[str]:
    """What is wrong with a whole ruleset whose every key is within its bounds
    (empty: nothing). The rulebook deals "15 Stamina: 3 each of values 1
    through 5" and "The first to lose all of their Stamina cards is defeated",
    so a deck of no Stamina card (every ``stamina_k`` 0) is a game already lost
    by both: refused."""
    counts = [int(cfg[f"stamina_{v}"]) for v in range(1, 6)]
    if sum(counts) < 1:
        return [
            "the Stamina deck is empty (stamina_1 .. stamina_5 are all 0); "
            "at least one of them must be 1 or more"
        ]
    return []


def encode_rules(cfg: dict, table=None) -> np.ndarray:
    """The int64 rules vector for a resolved ruleset (``RULE_FIELDS`` order).
    Clash of Steel has no card sets: ``table`` must be None."""
    if table is not None:
        raise ValueError("Clash of Steel has no card sets: encode_rules takes no card table")
    vec = np.array([int(cfg[name]) for name in RULE_FIELDS], dtype=np.int64)
    if vec[R_STAMINA : R_STAMINA + 5].sum() < 1:
        raise ValueError("the stamina deck is empty (stamina_1 .. stamina_5 are all 0)")
    return vec


# every stream is keyed by the seat: the two games of a deal are one game with the
# strategies swapped (kernels.contract.Engine.PAIR_STREAMS)
PAIR_STREAMS = "seat"

# ---- outcome codes -----------------------------------------------------------
DRAW = -1
END_DEFEAT = 0  # one player lost its last stamina card
END_CAP = 1  # round cap reached: a draw (C15)
END_DOUBLE = 2  # a tied bid emptied both hands: a draw (only with bid_keeps_last = false)
END_NAMES = ("defeat", "round_cap", "double_defeat")

# ---- per-game score-trace metrics (histogram sizes for the runner) -------------
# The score of a round is seat 0's stamina cards minus seat 1's at its end.
METRICS = {
    "lead_changes": 64,
    "max_deficit": 32,
    "decided_pct": 101,
    # the value of the opening bid: 3 × the bid winner's bid sum + its result
    # (0 loss, 1 draw, 2 win); -1 when the bid ended the game
    "init_bid": 3 * 16,
    # where A (and B) win their rounds: per game, rounds won at each range
    # and rounds fought there (the runner keeps exact histograms of each)
    **{f"{side}_wins_{r}": 61 for side in ("a", "b") for r in ("hand", "arm", "step", "reach")},
    **{f"rounds_{r}": 61 for r in ("hand", "arm", "step", "reach")},
    # 1 when the opening bid went to the coin (CD4)
    "bid_coin": 2,
}
# per-game event counts the tables and pages show (games where it happened)
EVENT_COUNTS = {
    "bid_coin": (
        "Opening bid settled by the coin: both bid their last card and tied (CD4)",
        "games",
    )
}

# ---- result row ----------------------------------------------------------------
(
    X_WINNER,
    X_ROUNDS,
    X_REASON,
    X_N0,
    X_N1,
    X_LEAD,
    X_MAXDEF0,
    X_MAXDEF1,
    X_NOTAHEAD0,
    X_NOTAHEAD1,
    X_BID0,
    X_BID1,
    X_BID_WINNER,
    X_BIDS,
) = range(14)
X_RANGE_WINS = 14  # 8: seat 0 at Hand..Reach, then seat 1
X_RANGE_ROUNDS = 22  # 4: rounds fought at Hand..Reach
X_CONSERVED = 26  # 1 if every stamina card of both seats is in hand or discard at the end
X_WOUNDS = 27  # 2: wounds held per seat at the end
X_MAN_ROUND = 29  # 2: round (1-based) each seat used its maneuver, 0 unused
X_DISARMED = 31  # 2: times each seat was disarmed
X_HITS = 33  # 2: times each seat was hit
X_START_RANGE = 35
X_TOTAL_CARDS = 36  # 2: stamina cards per seat in hand + discard at the end
X_BID_COIN = 38  # 1 if a tie that bidding again could not break went to the coin (CD4)
N_RESULT = 39

# ---- trace log columns: one row per round; seat blocks of SEAT_W columns -----------
G_RANGE, G_INIT, G_WAIT, G_WINNER, G_NEW_RANGE, G_NEXT_INIT = range(6)
SEAT0 = 6
(
    S_STANCE,
    S_ITEM,
    S_ACTION,
    S_TARGET,
    S_FACEUP,
    S_P1,
    S_P2,
    S_FEINT,
    S_FEINT_FROM,
    S_T_STAM,
    S_T_STANCE,
    S_T_ITEM,
    S_T_TARGET,
    S_T_WOUND,
    S_TOTAL,
    S_HIT,
    S_WOUND,
    S_ARMOR,
    S_DISARMED,
    S_RETRIEVED,
    S_SW,
    S_LEFT,
    S_DISC,
    S_HAND,
    S_REPEAT,
) = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 32)
# S_DISC: 5 counts discarded this round; S_HAND: 5 counts in hand at the start;
# S_REPEAT: 1 when the hit was a repeat wound of a kind already held (no new penalty)
SEAT_W = 33
LOG_WIDTH = SEAT0 + 2 * SEAT_W
MAX_BIDS = 32
# per bid: seat 0 counts (5), seat 1 counts (5), sum 0, sum 1, the card value each
# seat kept back because it was its last (0 none; CD4), the coin's seat (-1 none)
BID_W = 15
B_KEPT = 12
B_COIN = 14


# ---- rules kernels (pure; the rulebook tests call them) -----------------------------
@leaf
def _mod(mods, k):
    """Modifier ``k`` (``M_*``) of ``mods``; None: the printed value."""
    if mods is None:
        return PRINTED_ITEM_MODS[k]
    return mods[k]


@leaf
def item_mod(action, item, rng_, opp_item, spear_vs_spear, mods=None, spear_vs_shield=0):
    """C7: modifier of ``item`` (-1/5: none) to ``action`` at range ``rng_``
    against the opponent's played ``opp_item`` (-1/5: none). ``mods``: the
    values of the item modifier keys (``ITEM_MOD_KEYS`` order, e.g.
    ``rules[R_ITEM_MODS : R_ITEM_MODS + N_ITEM_MODS]``); None: as printed.
    ``spear_vs_spear`` / ``spear_vs_shield`` (0/1): whether the Spear's bonus
    against "all other weapons" counts a played Spear (CD2) / a Shield (C7);
    by default it counts a played Axe, Dagger or Sword only."""
    if item < 0 or item == NO_ITEM or action == MOVE:
        return 0
    has_opp = opp_item >= 0 and opp_item != NO_ITEM
    m = 0
    if item == AXE:
        if action == ATTACK and opp_item == SHIELD:
            m += _mod(mods, M_AXE_VS_SHIELD)
        if rng_ == ARM:
            m += _mod(mods, M_AXE_ARM)
    elif item == DAGGER:
        if rng_ == HAND:
            if action == ATTACK:
                m += _mod(mods, M_DAGGER_HAND)
        else:
            m += _mod(mods, M_DAGGER_ELSEWHERE)
    elif item == SHIELD:
        if action == DEFEND:
            m += _mod(mods, M_SHIELD_DEFEND)
            if opp_item == SPEAR:
                m += _mod(mods, M_SHIELD_VS_SPEAR)
    elif item == SPEAR:
        if rng_ == REACH:
            m += _mod(mods, M_SPEAR_REACH)
        if (
            action == ATTACK
            and rng_ != HAND
            and has_opp
            and (opp_item != SPEAR or spear_vs_spear != 0)
            # a Shield is a defence, not a weapon: the Axe's "+1 Attack vs
            # Shields" names it apart and the Shield has its own answer to Spears
            and (opp_item != SHIELD or spear_vs_shield != 0)
        ):
            m += _mod(mods, M_SPEAR_VS_ITEMS)
    elif item == SWORD:
        if rng_ == STEP:
            m += _mod(mods, M_SWORD_STEP)
        if action == ATTACK and opp_item == AXE:
            m += _mod(mods, M_SWORD_VS_AXE)
    return m


@njit
def _imod_table(spear_vs_spear, mods, spear_vs_shield=0):
    t = np.zeros((3, 6, 4, 6), dtype=np.int64)
    for a in range(3):
        for i in range(6):
            for r in range(4):
                for o in range(6):
                    t[a, i, r, o] = item_mod(a, i, r, o, spear_vs_spear, mods, spear_vs_shield)
    return t


@njit
def item_mod_table(rules):
    """``imod[action, item, range, opp_item]`` (item index 5 = none) for the
    kernels, from the rules' ``spear_vs_spear``, ``spear_vs_shield`` and item
    modifier keys: built once per batch, it serves both the totals
    (``total_parts``) and the strategies."""
    return _imod_table(
        rules[R_SPEAR_VS_SPEAR],
        rules[R_ITEM_MODS : R_ITEM_MODS + N_ITEM_MODS],
        rules[R_SPEAR_VS_SHIELD],
    )


@leaf
def total_parts(
    action,
    stamina,
    stance,
    item,
    opp_item,
    rng_,
    target,
    opp_action,
    opp_target,
    wounds_head,
    wounds_torso,
    wounds_legs,
    imod,
    out,
):
    """C6: the parts of an action's total into ``out``: stamina, stance, item
    (from ``imod``, ``item_mod_table``'s table), target bonus, wound. Returns
    the total."""
    out[0] = stamina
    out[1] = STANCE_MOD[stance]
    out[2] = imod[
        action,
        NO_ITEM if item < 0 else item,
        rng_,
        NO_ITEM if opp_item < 0 else opp_item,
    ]
    out[3] = 1 if (action == DEFEND and opp_action == ATTACK and target == opp_target) else 0
    if action == ATTACK:
        out[4] = -wounds_torso
    elif action == DEFEND:
        out[4] = -wounds_head
    else:
        out[4] = -wounds_legs
    return out[0] + out[1] + out[2] + out[3] + out[4]


@njit
def action_total(
    action,
    stamina,
    stance,
    item,
    opp_item,
    rng_,
    target,
    opp_action,
    opp_target,
    wounds_head=0,
    wounds_torso=0,
    wounds_legs=0,
    spear_vs_spear=0,
    mods=None,
    spear_vs_shield=0,
):
    """C6: the total of ``action`` played with ``stamina`` (sum of the played
    stamina), ``stance``, ``item`` (-1 none) against the opponent's item,
    action and target, with the player's wounds (0/1 each). ``mods``: the item
    modifier keys' values (``ITEM_MOD_KEYS`` order); None: as printed.
    ``spear_vs_spear``, ``spear_vs_shield``: the rules keys (0/1)."""
    parts = np.zeros(5, dtype=np.int64)
    return total_parts(
        action,
        stamina,
        stance,
        item,
        opp_item,
        rng_,
        target,
        opp_action,
        opp_target,
        wounds_head,
        wounds_torso,
        wounds_legs,
        _imod_table(spear_vs_spear, mods, spear_vs_shield),
        parts,
    )


@leaf
def round_winner(total0, total1, initiative):
    """C6: the seat with the higher total; a tie goes to the initiative holder."""
    if total0 > total1:
        return 0
    if total1 > total0:
        return 1
    return initiative


@leaf
def next_initiative(stance0, stance1, winner):
    """C11: who holds the initiative next round."""
    if stance0 == stance1:
        return winner
    if stance0 == QUICK:
        return 0
    if stance1 == QUICK:
        return 1
    # one Neutral, one Strong: the Strong player's opponent
    return 1 if stance0 == STRONG else 0


@leaf
def resolve(action0, action1, winner):
    """C8: what the round does. Returns ``(hit, disarmed, mover)``: the seat
    that is hit, the seat whose played item is disarmed, the seat that moves
    (-1 for none)."""
    loser = 1 - winner
    a = action0 if winner == 0 else action1
    if a == ATTACK:
        return loser, -1, -1
    if a == DEFEND:
        return -1, loser, -1
    return -1, -1, winner


@leaf
def discard_counts(hand, played, action, hit, stack_only, out):
    """C9 discards of one player, as counts of values 1..5 written to ``out``.

    ``hand`` holds the counts of the cards not played this round, ``played``
    the counts of the 1–2 cards played. Attack discards both played, Defend
    the highest, Move the lowest; a hit player also discards its highest
    stamina card "remaining in their hand" (``stack_only``, the default: from
    the unplayed stack; only when the stack is empty the card that would
    return, its last; without it, the highest card left counting played cards
    that would return). A player who was not hit keeps its last card (the
    highest of those it would discard).
    Returns the number of cards left.
    """
    for v in range(5):
        out[v] = 0
    hi = -1
    lo = -1
    n_played = 0
    for v in range(5):
        if played[v] > 0:
            if lo < 0:
                lo = v
            hi = v
            n_played += played[v]
    if n_played > 0:
        if action == ATTACK:
            for v in range(5):
                out[v] = played[v]
        elif action == DEFEND:
            out[hi] += 1
        else:
            out[lo] += 1
    n_hand = 0
    for v in range(5):
        n_hand += hand[v]
    left = n_hand + n_played
    for v in range(5):
        left -= out[v]
    if hit:
        # stack_only: the highest card remaining in the hand (the played cards
        # are on the table); with the stack empty, the card that would return is
        # the player's last, which a hit player loses ("You can't discard your
        # last Stamina card unless you were hit"). Otherwise the highest card
        # left, returning cards included.
        pick = -1
        if stack_only:
            for v in range(4, -1, -1):
                if hand[v] > 0:
                    pick = v
                    break
        if pick < 0:
            for v in range(4, -1, -1):
                if hand[v] + played[v] - out[v] > 0:
                    pick = v
                    break
        if pick >= 0:
            out[pick] += 1
            left -= 1
    elif left == 0 and n_played > 0:
        # C9: never discard the last card unless hit: keep the highest discarded
        for v in range(4, -1, -1):
            if out[v] > 0:
                out[v] -= 1
                left = 1
                break
    return left


# ---- the game ------------------------------------------------------------------
@leaf
def _fill_view(view, s, rnd, rng_, init, hand, disc, wounds, items, avail, man, man_left):
    """The public state and seat ``s``'s own state into its view (history and
    this round's cards are kept up to date separately). In the bid (``init``
    -1) the opponent's items are still hidden (C3: they are revealed once the
    initiative is decided): -1, not available."""
    o = 1 - s
    view[V_RANGE] = rng_
    view[V_INIT] = 1.0 if init == s else 0.0
    view[V_ROUND] = rnd
    n_s = 0
    n_o = 0
    for v in range(5):
        view[V_HAND + v] = hand[s, v]
        view[V_DISC + v] = disc[s, v]
        n_s += hand[s, v]
        n_o += hand[o, v]
    view[V_MY_N] = n_s
    view[V_OPP_N] = n_o
    for k in range(3):
        view[V_MY_WOUND + k] = wounds[s, k]
        view[V_OPP_WOUND + k] = wounds[o, k]
    for k in range(2):
        view[V_MY_ITEM + k] = items[s, k]
        view[V_MY_AVAIL + k] = avail[s, k]
        view[V_OPP_ITEM + k] = items[o, k] if init >= 0 else -1
        view[V_OPP_AVAIL + k] = avail[o, k] if init >= 0 else 0
    view[V_MY_MAN] = man[s]
    view[V_MY_MAN_LEFT] = man_left[s]


@leaf
def _n(counts, s):
    return counts[s, 0] + counts[s, 1] + counts[s, 2] + counts[s, 3] + counts[s, 4]


@leaf
def _value(counts, s):
    return counts[s, 0] + 2 * counts[s, 1] + 3 * counts[s, 2] + 4 * counts[s, 3] + 5 * counts[s, 4]


@leaf
def _discard_bid(hand, disc, bid, s, keep_last):
    """Seat ``s`` discards its bid; with ``keep_last`` a bid of every card it
    has keeps its highest card back (C9: never the last card unless hit).
    Returns the value kept back (0: none)."""
    for v in range(5):
        hand[s, v] -= bid[s, v]
        disc[s, v] += bid[s, v]
    if keep_last and _n(hand, s) == 0:
        for v in range(4, -1, -1):
            if bid[s, v] > 0:
                disc[s, v] -= 1
                hand[s, v] += 1
                return v + 1
    return 0


@leaf
def settle_bid(hand, disc, bid, keep_last, kept):
    """C2: settle one round of bidding. ``hand``, ``disc``, ``bid`` are
    int64[2, 5] counts of values 1..5 (the bid cards are still in hand). The
    higher sum wins the initiative and discards its bid, the loser keeps its
    cards; a tie discards both bids. With ``keep_last`` (CD4) a player whose
    bid is every card it has keeps its highest card (C9); the value each seat
    kept back goes to ``kept`` (0: none). Returns the winning seat, -1 for a
    tie, -2 for a tie that discarded nothing (both bid their one last card),
    which bidding again cannot break.
    """
    s0 = _value(bid, 0)
    s1 = _value(bid, 1)
    kept[0] = 0
    kept[1] = 0
    if s0 == s1:
        gone = 0
        for s in range(2):
            kept[s] = _discard_bid(hand, disc, bid, s, keep_last)
            gone += _n(bid, s) - (1 if kept[s] > 0 else 0)
        return -1 if gone > 0 else -2
    w = 0 if s0 > s1 else 1
    kept[w] = _discard_bid(hand, disc, bid, w, keep_last)
    return w


@njit
def play_game(rules, imod, strat0, strat1, seed, deal, log, blog, do_log, result):
    """Play one game of deal ``deal``; ``strat0`` sits in seat 0.

    ``result`` (int64[N_RESULT]) receives the ``X_*`` fields. The score of a
    round is seat 0's stamina cards minus seat 1's at its end (after the
    discard step, in the deciding round too), tracked as in Tosk. With
    ``do_log`` each round goes to ``log`` (``G_*``, ``SEAT0 + s * SEAT_W +
    S_*`` columns) and each bid to ``blog``.
    """
    rngs, ints, views, sc = _work()
    _start(seed, deal, rngs, ints, views, sc, result)
    _play(rules, imod, strat0, strat1, rngs, ints, views, sc, log, blog, do_log, result)


@njit
def _work():
    """The work arrays of one game: noise streams (seat 0, seat 1, the bid's
    coin), integer state, views, scratch."""
    return (
        np.empty((3, 4), dtype=np.uint64),
        np.empty((16, 2, 5), dtype=np.int64),
        np.empty((2, N_VIEW), dtype=np.float64),
        np.empty((2, SCRATCH), dtype=np.float64),
    )


@leaf
def _start(seed, deal, rngs, ints, views, sc, result):
    """Zero the work arrays and the result row, and seed both seats' noise
    streams and the coin for deal ``deal`` (so one set of arrays serves game
    after game)."""
    rng.seed_state(rngs[0], seed, deal, rng.PURPOSE_SEAT0)
    rng.seed_state(rngs[1], seed, deal, rng.PURPOSE_SEAT0 + 1)
    rng.seed_state(rngs[2], seed, deal, rng.PURPOSE_COIN)
    ints[:] = 0
    views[:] = 0.0
    sc[:] = 0.0
    result[:] = 0


@leaf
def _play(rules, imod, strat0, strat1, rngs, ints, views, sc, log, blog, do_log, result):
    """The game itself, on the work arrays ``play_game`` allocates (zeroed;
    ``rngs`` seeded): a leaf kernel, so no array it touches is reference
    counted."""
    sw_max = rules[R_SECOND_WIND_MAX]
    stack_only = rules[R_HIT_STACK_ONLY]
    keep_last = rules[R_BID_KEEPS_LAST] != 0
    noise0 = rngs[0]
    noise1 = rngs[1]
    hand = ints[0]
    disc = ints[1]
    played = ints[2]  # stamina played this round
    bid = ints[3]
    dis = ints[4]  # discards this round
    wounds = ints[5, :, :3]
    items = ints[6, :, :2]
    avail = ints[7, :, :2]
    cards = ints[8, :, :4]  # this round's stance, item, action, target
    faceup = ints[9, :, :4]
    total = ints[10, :, 0]
    man = ints[10, :, 1]
    man_left = ints[10, :, 2]
    left = ints[10, :, 3]
    hit_count = ints[10, :, 4]
    parts = ints[11]  # parts of each seat's total
    range_wins = ints[12, :, :4]
    range_rounds = ints[13, 0, :4]
    disarm_count = ints[13, 1, :]
    man_round = ints[14, 0, :2]
    feint = ints[14, 1, :2]
    trk = ints[15]
    kept = ints[14, 0, 2:4]  # the bid card each seat kept back as its last (CD4)
    lead = trk[0, :2]
    max_def = trk[1, :2]
    not_ahead = trk[0, 2:4]
    score = trk[1, 2:4]
    lead[0] = -1
    edges_ok = False  # the views' range edges (refresh_view) match the items available

    for s in range(2):
        strat = strat0 if s == 0 else strat1
        lo = int(strat[P_LOADOUT])
        items[s, 0] = LOADOUT_TABLE[lo, 0]
        items[s, 1] = LOADOUT_TABLE[lo, 1]
        man[s] = LOADOUT_TABLE[lo, 2]
        man_left[s] = 1
        avail[s, 0] = 1
        avail[s, 1] = 1
        for v in range(5):
            hand[s, v] = rules[R_STAMINA + v]

    winner = DRAW
    reason = END_CAP
    rounds = 0
    # ---- initiative bid (C2)
    nb = 0
    init = 0
    while True:
        for s in range(2):
            _fill_view(views[s], s, nb, 0, -1, hand, disc, wounds, items, avail, man, man_left)
        for s in range(2):
            choose_bid(
                strat0 if s == 0 else strat1, views[s], noise0 if s == 0 else noise1, sc[s], bid[s]
            )
        if do_log and nb < MAX_BIDS:
            for v in range(5):
                blog[nb, v] = bid[0, v]
                blog[nb, 5 + v] = bid[1, v]
            blog[nb, 10] = _value(bid, 0)
            blog[nb, 11] = _value(bid, 1)
        if nb == 0:
            result[X_BID0] = _value(bid, 0)
            result[X_BID1] = _value(bid, 1)
        nb += 1
        init = settle_bid(hand, disc, bid, keep_last, kept)
        if do_log and nb <= MAX_BIDS:
            blog[nb - 1, B_KEPT] = kept[0]
            blog[nb - 1, B_KEPT + 1] = kept[1]
            blog[nb - 1, B_COIN] = -1
        if init == -2:
            # CD4: both bid their one last card and tied; bidding again cannot
            # change anything, so a fair coin gives the initiative
            init = 0 if rng.uniform(rngs[2]) < 0.5 else 1
            result[X_BID_COIN] = 1
            if do_log and nb <= MAX_BIDS:
                blog[nb - 1, B_COIN] = init
        if init >= 0:
            break
        e0 = _n(hand, 0) == 0
        e1 = _n(hand, 1) == 0
        if e0 or e1:
            if e0 and e1:
                reason = END_DOUBLE
            else:
                winner = 1 if e0 else 0
                reason = END_DEFEAT
            init = -1
            break
    result[X_BID_WINNER] = init
    result[X_BIDS] = nb
    if init >= 0 and _n(hand, init) == 0:  # the winner bid its last card
        winner = 1 - init
        reason = END_DEFEAT

    rng_ = 0
    if winner == DRAW and reason == END_CAP:
        # ---- starting range (C3): the initiative winner, seeing both loadouts
        _fill_view(views[init], init, 0, 0, init, hand, disc, wounds, items, avail, man, man_left)
        refresh_view(views[init], imod)
        rng_ = choose_range(
            strat0 if init == 0 else strat1,
            views[init],
            imod,
            -1,
            noise0 if init == 0 else noise1,
            sc[init],
        )
        result[X_START_RANGE] = rng_

        for rnd in range(rules[R_MAX_ROUNDS]):
            rounds = rnd + 1
            for s in range(2):
                view = views[s]
                _fill_view(
                    view, s, rnd, rng_, init, hand, disc, wounds, items, avail, man, man_left
                )
                for t in range(4):
                    view[V_MY_CARD + t] = NOT_PLAYED
                    view[V_OPP_CARD + t] = -1
                    cards[s, t] = NOT_PLAYED
                    faceup[s, t] = 0
                view[V_MY_STAM] = 0
                feint[s] = 0
                if not edges_ok:
                    refresh_view(view, imod)
            edges_ok = True
            if do_log:
                log[rnd, G_RANGE] = rng_
                log[rnd, G_INIT] = init
                for s in range(2):
                    for v in range(5):
                        log[rnd, SEAT0 + s * SEAT_W + S_HAND + v] = hand[s, v]
            other = 1 - init
            # ---- play the cards (C4)
            waits = 0
            for t in range(4):
                sh = strat0 if init == 0 else strat1
                wait = choose_wait(sh, views[init], t, noise0 if init == 0 else noise1)
                order0 = other if wait else init
                for k in range(2):
                    s = order0 if k == 0 else 1 - order0
                    strat = strat0 if s == 0 else strat1
                    if t == T_ITEM and avail[s, 0] == 0 and avail[s, 1] == 0:
                        c = -1  # C5: no item to play
                    else:
                        c = choose_card(
                            strat, views[s], imod, t, noise0 if s == 0 else noise1, sc[s]
                        )
                    cards[s, t] = c
                    views[s, V_MY_CARD + t] = c
                    if wait:
                        faceup[s, t] = 1
                        views[1 - s, V_OPP_CARD + t] = c
                if wait:
                    waits |= 1 << t
            if do_log:
                log[rnd, G_WAIT] = waits
            # stamina: always face down; both choose from what they see
            for s in range(2):
                strat = strat0 if s == 0 else strat1
                choose_stamina(
                    strat, views[s], imod, noise0 if s == 0 else noise1, sc[s], played[s]
                )
                ssum = 0
                for v in range(5):
                    hand[s, v] -= played[s, v]
                    ssum += played[s, v] * (v + 1)
                views[s, V_MY_STAM] = ssum
            # ---- Feint (C12): before the reveal, from the face-up cards only
            for k in range(2):
                s = other if k == 0 else init
                if man[s] == FEINT and man_left[s] == 1:
                    strat = strat0 if s == 0 else strat1
                    f = choose_feint(strat, views[s], imod, noise0 if s == 0 else noise1, sc[s])
                    feint[s] = f
                    if f > 0:
                        man_left[s] = 0
                        man_round[s] = rounds
                        t = T_ACTION if f <= 3 else T_TARGET
                        nv = f - 1 if f <= 3 else f - 4
                        if do_log:
                            log[rnd, SEAT0 + s * SEAT_W + S_FEINT_FROM] = cards[s, t]
                        cards[s, t] = nv
                        views[s, V_MY_CARD + t] = nv
                        if faceup[s, t] and rules[R_FEINT_ORDER] == 1:
                            views[1 - s, V_OPP_CARD + t] = nv
            # ---- reveal and totals (C6, C7)
            for s in range(2):
                o = 1 - s
                ssum = 0
                for v in range(5):
                    ssum += played[s, v] * (v + 1)
                total[s] = total_parts(
                    cards[s, T_ACTION],
                    ssum,
                    cards[s, T_STANCE],
                    cards[s, T_ITEM],
                    cards[o, T_ITEM],
                    rng_,
                    cards[s, T_TARGET],
                    cards[o, T_ACTION],
                    cards[o, T_TARGET],
                    wounds[s, HEAD],
                    wounds[s, TORSO],
                    wounds[s, LEGS],
                    imod,
                    parts[s],
                )
                if do_log:
                    b = SEAT0 + s * SEAT_W
                    log[rnd, b + S_STANCE] = cards[s, T_STANCE]
                    log[rnd, b + S_ITEM] = cards[s, T_ITEM]
                    log[rnd, b + S_ACTION] = cards[s, T_ACTION]
                    log[rnd, b + S_TARGET] = cards[s, T_TARGET]
                    log[rnd, b + S_FACEUP] = (
                        faceup[s, 0]
                        | (faceup[s, 1] << 1)
                        | (faceup[s, 2] << 2)
                        | (faceup[s, 3] << 3)
                    )
                    p1 = 0
                    p2 = 0
                    for v in range(4, -1, -1):
                        for _ in range(played[s, v]):
                            if p1 == 0:
                                p1 = v + 1
                            else:
                                p2 = v + 1
                    log[rnd, b + S_P1] = p1
                    log[rnd, b + S_P2] = p2
                    log[rnd, b + S_FEINT] = feint[s]
                    for k in range(5):
                        log[rnd, b + S_T_STAM + k] = parts[s, k]
                    log[rnd, b + S_TOTAL] = total[s]
            w = round_winner(total[0], total[1], init)
            range_wins[w, rng_] += 1
            range_rounds[rng_] += 1
            hit, disarmed, mover = resolve(cards[0, T_ACTION], cards[1, T_ACTION], w)
            # ---- discard stamina (C9), Second Wind (C13), defeat
            for s in range(2):
                left[s] = discard_counts(
                    hand[s], played[s], cards[s, T_ACTION], hit == s, stack_only, dis[s]
                )
                for v in range(5):
                    hand[s, v] += played[s, v] - dis[s, v]
                    disc[s, v] += dis[s, v]
                if do_log:
                    b = SEAT0 + s * SEAT_W
                    for v in range(5):
                        log[rnd, b + S_DISC + v] = dis[s, v]
                    log[rnd, b + S_HIT] = 1 if hit == s else 0
                if man[s] == SECOND_WIND and man_left[s] == 1:
                    # C13: the highest discarded card of value at most
                    # second_wind_max; with none, the strategy is not asked and
                    # the maneuver stays
                    sw = -1
                    for v in range(min(sw_max, 5) - 1, -1, -1):
                        if disc[s, v] > 0:
                            sw = v
                            break
                    strat = strat0 if s == 0 else strat1
                    if sw >= 0 and use_second_wind(strat, left[s]):
                        disc[s, sw] -= 1
                        hand[s, sw] += 1
                        left[s] += 1
                        man_left[s] = 0
                        man_round[s] = rounds
                        if do_log:
                            log[rnd, SEAT0 + s * SEAT_W + S_SW] = sw + 1
                if do_log:
                    log[rnd, SEAT0 + s * SEAT_W + S_LEFT] = left[s]
            if do_log:
                log[rnd, G_WINNER] = w
                log[rnd, G_NEW_RANGE] = rng_
                log[rnd, G_NEXT_INIT] = -1
                for s in range(2):
                    b = SEAT0 + s * SEAT_W
                    log[rnd, b + S_WOUND] = -1
                    log[rnd, b + S_DISARMED] = -1
                    log[rnd, b + S_RETRIEVED] = -1
            score[0] = left[0]
            score[1] = left[1]
            if left[0] == 0 or left[1] == 0:
                winner = 1 if left[0] == 0 else 0
                reason = END_DEFEAT
                track_score(score, rounds, lead, max_def, not_ahead)
                break
            # ---- wounds and Armor (C10)
            if hit >= 0:
                hit_count[hit] += 1
                kind = cards[w, T_TARGET]  # High -> Head, Mid -> Torso, Low -> Legs
                if wounds[hit, kind] == 0:
                    negate = False
                    if man[hit] == ARMOR and man_left[hit] == 1:
                        _fill_view(
                            views[hit],
                            hit,
                            rnd,
                            rng_,
                            init,
                            hand,
                            disc,
                            wounds,
                            items,
                            avail,
                            man,
                            man_left,
                        )
                        negate = use_armor(
                            strat0 if hit == 0 else strat1,
                            views[hit],
                            kind,
                            noise0 if hit == 0 else noise1,
                        )
                    if negate:
                        man_left[hit] = 0
                        man_round[hit] = rounds
                        if do_log:
                            log[rnd, SEAT0 + hit * SEAT_W + S_ARMOR] = 1
                    else:
                        wounds[hit, kind] = 1
                        if do_log:
                            log[rnd, SEAT0 + hit * SEAT_W + S_WOUND] = kind
                elif do_log:  # a repeat wound of a kind held: no new penalty (C10)
                    log[rnd, SEAT0 + hit * SEAT_W + S_WOUND] = kind
                    log[rnd, SEAT0 + hit * SEAT_W + S_REPEAT] = 1
            # ---- disarm (C8)
            if disarmed >= 0:
                it = cards[disarmed, T_ITEM]
                if it >= 0:
                    for k in range(2):
                        if items[disarmed, k] == it:
                            avail[disarmed, k] = 0
                    disarm_count[disarmed] += 1
                    edges_ok = False
                    if do_log:
                        log[rnd, SEAT0 + disarmed * SEAT_W + S_DISARMED] = it
            # ---- change range and retrieve (C8)
            if mover >= 0:
                strat = strat0 if mover == 0 else strat1
                mv = views[mover]
                _fill_view(
                    mv, mover, rnd, rng_, init, hand, disc, wounds, items, avail, man, man_left
                )
                for t in range(4):  # all cards are face up now
                    mv[V_OPP_CARD + t] = cards[1 - mover, t]
                rng_ = choose_range(
                    strat, mv, imod, rng_, noise0 if mover == 0 else noise1, sc[mover]
                )
                if avail[mover, 0] == 0 or avail[mover, 1] == 0:
                    mv[V_RANGE] = rng_
                    k = choose_retrieve(strat, mv, imod, rng_)
                    avail[mover, k] = 1
                    edges_ok = False
                    if do_log:
                        log[rnd, SEAT0 + mover * SEAT_W + S_RETRIEVED] = items[mover, k]
            # ---- next initiative (C11)
            init = next_initiative(cards[0, T_STANCE], cards[1, T_STANCE], w)
            if do_log:
                log[rnd, G_NEW_RANGE] = rng_
                log[rnd, G_NEXT_INIT] = init
            # ---- the opponent models: every card is revealed now
            for s in range(2):
                o = 1 - s
                view = views[s]
                oa = cards[o, T_ACTION]
                view[V_OPP_ACT + oa] += 1.0
                if oa == ATTACK:
                    view[V_OPP_ATK_TGT + cards[o, T_TARGET]] += 1.0
                elif oa == DEFEND:
                    view[V_OPP_DEF_TGT + cards[o, T_TARGET]] += 1.0
                view[V_OPP_STANCE + cards[o, T_STANCE]] += 1.0
                for v in range(5):
                    view[V_OPP_STAM] += played[o, v] * (v + 1)
                view[V_OPP_ROUNDS] += 1.0
            track_score(score, rounds, lead, max_def, not_ahead)
    result[X_WINNER] = winner
    result[X_ROUNDS] = rounds
    result[X_REASON] = reason
    result[X_N0] = _n(hand, 0)
    result[X_N1] = _n(hand, 1)
    result[X_LEAD] = lead[1]
    result[X_MAXDEF0] = max_def[0]
    result[X_MAXDEF1] = max_def[1]
    result[X_NOTAHEAD0] = not_ahead[0]
    result[X_NOTAHEAD1] = not_ahead[1]
    for s in range(2):
        for r in range(4):
            result[X_RANGE_WINS + 4 * s + r] = range_wins[s, r]
        result[X_WOUNDS + s] = wounds[s, 0] + wounds[s, 1] + wounds[s, 2]
        result[X_MAN_ROUND + s] = man_round[s]
        result[X_DISARMED + s] = disarm_count[s]
        result[X_HITS + s] = hit_count[s]
        result[X_TOTAL_CARDS + s] = _n(hand, s) + _n(disc, s)
    for r in range(4):
        result[X_RANGE_ROUNDS + r] = range_rounds[r]
    ok = 1
    for s in range(2):
        for v in range(5):
            if hand[s, v] + disc[s, v] != rules[R_STAMINA + v] or hand[s, v] < 0:
                ok = 0
    result[X_CONSERVED] = ok


CHUNK = 32  # games per parallel task: each task allocates its work arrays once


@chunked
def _simulate(c0, c1, rules, imod, strat_a, strat_b, seed, first_deal, n_deals, out):
    """Kernel: deal d is played as game 2d (A in seat 0) and 2d+1 (A in seat 1);
    chunks ``c0 .. c1 - 1`` of ``CHUNK`` games here."""
    n_games = 2 * n_deals
    for c in range(c0, c1):
        log = np.zeros((1, LOG_WIDTH), dtype=np.int64)
        blog = np.zeros((1, BID_W), dtype=np.int64)
        res = np.zeros(N_RESULT, dtype=np.int64)
        rngs, ints, views, sc = _work()
        for g in range(c * CHUNK, min(n_games, (c + 1) * CHUNK)):
            deal = first_deal + g // 2
            _start(seed, deal, rngs, ints, views, sc, res)
            if g % 2 == 0:
                _play(rules, imod, strat_a, strat_b, rngs, ints, views, sc, log, blog, False, res)
            else:
                _play(rules, imod, strat_b, strat_a, rngs, ints, views, sc, log, blog, False, res)
            for k in range(N_RESULT):
                out[g, k] = res[k]


def _check_loadouts(rules, *strats):
    legal = legal_loadouts(rules)
    for st in strats:
        lo = int(st[P_LOADOUT])
        if lo not in legal:
            name = loadout_name(lo) if 0 <= lo < len(ALL_LOADOUTS) else str(lo)
            raise ValueError(f"loadout {name} is not legal under these rules (C1)")


def _prep(rules, strat_a, strat_b):
    rules = np.asarray(rules, np.int64)
    sa, sb = np.asarray(strat_a, np.float64), np.asarray(strat_b, np.float64)
    _check_loadouts(rules, sa, sb)
    return rules, item_mod_table(rules), sa, sb


def simulate(rules, strat_a, strat_b, seed, first_game, n_games):
    """Play games ``first_game .. first_game + n_games`` of seed ``seed``.

    Games come in seat-swapped pairs: game ``2d`` puts strategy A in seat 0
    and game ``2d + 1`` puts it in seat 1, both with the noise streams of deal
    ``d``, so ``first_game`` and ``n_games`` must be even. Returns a dict of
    int64 arrays, one entry per game:

    - ``winner_seat`` (-1 draw), ``a_seat`` (A's seat), ``a_points`` (A's half
      points: 2 win, 1 draw, 0 loss), ``rounds`` (combat rounds; 0 when the
      bid decided the game), ``reason`` (index into ``END_NAMES``);
    - ``stamina_seat0``/``stamina_seat1``: stamina cards left in hand;
    - score-trace metrics (score = seat 0's stamina cards minus seat 1's at
      each round's end): ``lead_changes``, ``max_deficit`` (the winner's
      largest deficit, -1 for a draw), ``decided_pct`` (share of the game, in
      whole percent, before the winner led for good; -1 for a draw);
    - the opening bid: ``bid_seat0``/``bid_seat1`` (sums of the first bid),
      ``bid_winner`` (seat that won the initiative, -1 if the bid ended the
      game), ``bids`` (bids made, ties included), ``start_range``,
      ``bid_coin`` (1 when both bid their one last card and tied, and a coin
      gave the initiative: CD4);
    - ranges: ``wins_seat{0,1}_{hand,arm,step,reach}`` rounds won by that seat
      at that range (the range the round was fought at),
      ``rounds_{hand,arm,step,reach}`` rounds fought there;
    - ``wounds_seat0/1`` (wounds held at the end), ``hits_seat0/1`` (times
      hit), ``disarmed_seat0/1`` (times disarmed), ``maneuver_round_seat0/1``
      (round its maneuver was used, 0 unused), ``cards_seat0/1`` (stamina
      cards in hand + discard at the end: the deck size) and ``conserved``
      (1 when every stamina card of both seats is in hand or discard).
    """
    if first_game % 2 or n_games % 2:
        raise ValueError("first_game and n_games must be even (seat-swapped pairs)")
    rules, imod, sa, sb = _prep(rules, strat_a, strat_b)
    out = np.zeros((n_games, N_RESULT), dtype=np.int64)
    _simulate(
        n_games, CHUNK, rules, imod, sa, sb, np.uint64(seed), first_game // 2, n_games // 2, out
    )
    return outcome_arrays(out)


def outcome_arrays(out: np.ndarray) -> dict:
    """Per-game dict of arrays from the raw kernel rows (see ``simulate``)."""
    winner = out[:, X_WINNER]
    res = pair_outcomes(
        winner,
        out[:, X_ROUNDS],
        out[:, X_LEAD],
        out[:, X_MAXDEF0],
        out[:, X_MAXDEF1],
        out[:, X_NOTAHEAD0],
        out[:, X_NOTAHEAD1],
    )
    a_seat = res["a_seat"]
    res.update(
        {
            "rounds": out[:, X_ROUNDS],
            "reason": out[:, X_REASON],
            "stamina_seat0": out[:, X_N0],
            "stamina_seat1": out[:, X_N1],
            "bid_seat0": out[:, X_BID0],
            "bid_seat1": out[:, X_BID1],
            "bid_winner": out[:, X_BID_WINNER],
            "bids": out[:, X_BIDS],
            "start_range": out[:, X_START_RANGE],
            "bid_coin": out[:, X_BID_COIN],
        }
    )
    for s in range(2):
        for r, name in enumerate(RANGES):
            res[f"wins_seat{s}_{name.lower()}"] = out[:, X_RANGE_WINS + 4 * s + r]
    for r, name in enumerate(RANGES):
        res[f"rounds_{name.lower()}"] = out[:, X_RANGE_ROUNDS + r]
    for s in range(2):
        res[f"wounds_seat{s}"] = out[:, X_WOUNDS + s]
        res[f"hits_seat{s}"] = out[:, X_HITS + s]
        res[f"disarmed_seat{s}"] = out[:, X_DISARMED + s]
        res[f"maneuver_round_seat{s}"] = out[:, X_MAN_ROUND + s]
        res[f"cards_seat{s}"] = out[:, X_TOTAL_CARDS + s]
    res["conserved"] = out[:, X_CONSERVED]
    # A's point of view, for the runner's exact histograms (METRICS)
    bw = out[:, X_BID_WINNER]
    bid_sum = np.where(bw == 0, out[:, X_BID0], out[:, X_BID1])
    bw_result = np.where(winner == DRAW, 1, np.where(winner == bw, 2, 0))
    res["init_bid"] = np.where(bw >= 0, 3 * np.minimum(bid_sum, 15) + bw_result, -1)
    for r, name in enumerate(RANGES):
        w0, w1 = out[:, X_RANGE_WINS + r], out[:, X_RANGE_WINS + 4 + r]
        res[f"a_wins_{name.lower()}"] = np.where(a_seat == 0, w0, w1)
        res[f"b_wins_{name.lower()}"] = np.where(a_seat == 0, w1, w0)
    return res


def trace_log(rules, strat_a, strat_b, seed, game):
    """Replay game ``game`` with a round-by-round log.

    Returns ``(log, bids, result)``: ``log`` int64[rounds, LOG_WIDTH],
    ``bids`` int64[bids, BID_W] and the kernel's result row. Game ``2d`` has A
    in seat 0, game ``2d + 1`` has A in seat 1 (as in ``simulate``).
    """
    rules, imod, sa, sb = _prep(rules, strat_a, strat_b)
    log = np.zeros((int(rules[R_MAX_ROUNDS]), LOG_WIDTH), dtype=np.int64)
    blog = np.zeros((MAX_BIDS, BID_W), dtype=np.int64)
    res = np.zeros(N_RESULT, dtype=np.int64)
    if game % 2 == 0:
        play_game(rules, imod, sa, sb, np.uint64(seed), game // 2, log, blog, True, res)
    else:
        play_game(rules, imod, sb, sa, np.uint64(seed), game // 2, log, blog, True, res)
    return log[: res[X_ROUNDS]], blog[: min(int(res[X_BIDS]), MAX_BIDS)], res


def _vals(counts) -> list[int]:
    return [v + 1 for v in range(4, -1, -1) for _ in range(int(counts[v]))]


def _fmt_vals(counts) -> str:
    return "+".join(str(v) for v in _vals(counts)) or "-"


def trace(rules, strat_a, strat_b, seed, game, names=("A", "B"), card_names=None):
    """The events of one game, in order, each a dict with a readable ``text``.

    ``names`` label strategy A and B; seats are numbered 1 and 2. Events: the
    loadouts, each bid, the starting range, one per round, and the end.
    Clash of Steel has no card sets: ``card_names`` is ignored.
    """
    log, bids, res = trace_log(rules, strat_a, strat_b, seed, game)
    sa, sb = np.asarray(strat_a), np.asarray(strat_b)
    who = (names[0], names[1]) if game % 2 == 0 else (names[1], names[0])
    lo = (
        (int(sa[P_LOADOUT]), int(sb[P_LOADOUT]))
        if game % 2 == 0
        else (int(sb[P_LOADOUT]), int(sa[P_LOADOUT]))
    )
    events = [
        {
            "kind": "loadouts",
            "loadouts": [loadout_name(lo[0]), loadout_name(lo[1])],
            "text": f"seat 1 {who[0]}: {loadout_name(lo[0])}; "
            f"seat 2 {who[1]}: {loadout_name(lo[1])}",
        }
    ]
    for i, b in enumerate(bids):
        s0, s1 = int(b[10]), int(b[11])
        kept = [int(b[B_KEPT]), int(b[B_KEPT + 1])]
        coin = int(b[B_COIN])
        if s0 == s1:
            out = "tie: both bids discarded, bid again"
            if coin >= 0:
                out = (
                    f"tie, and both bid their last card, which neither may discard: bidding "
                    f"again changes nothing, so a coin gives seat {coin + 1} ({who[coin]}) "
                    "the initiative"
                )
        else:
            w = 0 if s0 > s1 else 1
            out = (
                f"seat {w + 1} ({who[w]}) gains the initiative and discards its bid; "
                f"seat {2 - w} takes its bid back"
            )
        for s in range(2):
            if kept[s] and coin < 0:
                out += (
                    f"; seat {s + 1} keeps its {kept[s]}: it may not discard its last stamina card"
                )
        events.append(
            {
                "kind": "bid",
                "bid": i + 1,
                "sums": [s0, s1],
                "text": f"bid {i + 1}: seat 1 bids {_fmt_vals(b[0:5])} = {s0}, "
                f"seat 2 bids {_fmt_vals(b[5:10])} = {s1}: {out}",
            }
        )
    if res[X_BID_WINNER] >= 0 and log.shape[0] > 0:
        w = int(res[X_BID_WINNER])
        events.append(
            {
                "kind": "range",
                "range": RANGES[int(res[X_START_RANGE])],
                "text": f"seat {w + 1} ({who[w]}) chooses the starting range: "
                f"{RANGES[int(res[X_START_RANGE])]}",
            }
        )
    for r in range(log.shape[0]):
        row = log[r]
        init = int(row[G_INIT])
        waits = int(row[G_WAIT])
        wtxt = " ".join(
            f"{n}:{'wait' if (waits >> t) & 1 else 'act'}"
            for t, n in enumerate(("stance", "item", "action", "target"))
        )
        parts = []
        seats = []
        for s in range(2):
            b = SEAT0 + s * SEAT_W
            x = row[b : b + SEAT_W]
            face = int(x[S_FACEUP])
            item = ITEMS[int(x[S_ITEM])] if x[S_ITEM] >= 0 else "no item"

            def f(name, t, face=face):
                return name + ("" if (face >> t) & 1 else "*")

            stam = "+".join(str(int(v)) for v in (x[S_P1], x[S_P2]) if v > 0)
            feint = ""
            if x[S_FEINT] > 0:
                fk = int(x[S_FEINT])
                if fk <= 3:
                    feint = f" [Feint: Action {ACTIONS[int(x[S_FEINT_FROM])]} -> {ACTIONS[fk - 1]}]"
                else:
                    feint = f" [Feint: Target {TARGETS[int(x[S_FEINT_FROM])]} -> {TARGETS[fk - 4]}]"
            mods = (
                f"stamina {int(x[S_T_STAM])} stance {int(x[S_T_STANCE]):+d} "
                f"item {int(x[S_T_ITEM]):+d} target {int(x[S_T_TARGET]):+d} "
                f"wound {int(x[S_T_WOUND]):+d}"
            )
            extra = []
            disc = _vals(x[S_DISC : S_DISC + 5])
            extra.append("discards " + ("+".join(map(str, disc)) if disc else "nothing"))
            if x[S_HIT]:
                extra.append("is hit")
            if x[S_WOUND] >= 0 and x[S_REPEAT]:
                extra.append(
                    f"takes a second {WOUNDS[int(x[S_WOUND])]} wound, which adds no "
                    "penalty (it already holds one)"
                )
            elif x[S_WOUND] >= 0:
                extra.append(f"takes a {WOUNDS[int(x[S_WOUND])]} wound")
            if x[S_ARMOR]:
                extra.append("Armor negates the wound")
            if x[S_DISARMED] >= 0:
                extra.append(f"is disarmed of its {ITEMS[int(x[S_DISARMED])]}")
            if x[S_RETRIEVED] >= 0:
                extra.append(f"retrieves its {ITEMS[int(x[S_RETRIEVED])]}")
            if x[S_SW] > 0:
                extra.append(f"Second Wind returns a {int(x[S_SW])}")
            extra.append(f"{int(x[S_LEFT])} stamina cards left")
            parts.append(
                f"seat {s + 1} {who[s]}: {f(STANCES[int(x[S_STANCE])], 0)} "
                f"{f(item, 1)} {f(ACTIONS[int(x[S_ACTION])], 2)} {f(TARGETS[int(x[S_TARGET])], 3)}"
                f" stamina {stam}{feint} = {int(x[S_TOTAL])} ({mods}); {', '.join(extra)}"
            )
            seats.append(
                {
                    "player": who[s],
                    "stance": STANCES[int(x[S_STANCE])],
                    "item": item,
                    "action": ACTIONS[int(x[S_ACTION])],
                    "target": TARGETS[int(x[S_TARGET])],
                    "stamina": [int(v) for v in (x[S_P1], x[S_P2]) if v > 0],
                    "faceup": face,
                    "total": int(x[S_TOTAL]),
                    "discarded": disc,
                    "hit": bool(x[S_HIT]),
                    "left": int(x[S_LEFT]),
                }
            )
        w = int(row[G_WINNER])
        end = f"seat {w + 1} wins the round"
        if row[G_NEW_RANGE] != row[G_RANGE]:
            end += f"; range {RANGES[int(row[G_RANGE])]} -> {RANGES[int(row[G_NEW_RANGE])]}"
        if row[G_NEXT_INIT] >= 0:
            end += f"; initiative to seat {int(row[G_NEXT_INIT]) + 1}"
        text = (
            f"round {r + 1:>2} at {RANGES[int(row[G_RANGE])]}, initiative seat {init + 1} "
            f"({wtxt}; * = face down) | " + " | ".join(parts) + " | " + end
        )
        events.append(
            {
                "kind": "round",
                "round": r + 1,
                "range": RANGES[int(row[G_RANGE])],
                "initiative_seat": init + 1,
                "waits": waits,
                "seats": seats,
                "winner_seat": w + 1,
                "text": text,
            }
        )
    winner = int(res[X_WINNER])
    reason = END_NAMES[int(res[X_REASON])]
    if winner == DRAW:
        text = f"draw after {int(res[X_ROUNDS])} rounds ({reason})"
    else:
        text = (
            f"seat {winner + 1} ({who[winner]}) wins after {int(res[X_ROUNDS])} rounds "
            f"({reason}); stamina cards {int(res[X_N0])} : {int(res[X_N1])}"
        )
    events.append(
        {
            "kind": "end",
            "winner_seat": winner + 1 if winner != DRAW else None,
            "winner": who[winner] if winner != DRAW else None,
            "reason": reason,
            "rounds": int(res[X_ROUNDS]),
            "stamina": [int(res[X_N0]), int(res[X_N1])],
            "text": text,
        }
    )
    return events


def catalogue() -> list[dict]:
    """Every loadout with its items and maneuver (for tables and docs)."""
    return [
        {
            "id": i,
            "name": loadout_name(i),
            "items": [ITEMS[a], ITEMS[b]],
            "maneuver": MANEUVERS[m],
            "default_legal": i < len(LOADOUTS),
        }
        for i, (a, b, m) in enumerate(ALL_LOADOUTS)
    ]
