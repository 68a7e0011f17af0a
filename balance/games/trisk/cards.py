"""Trisk's card set and decks: reading, validating, encoding and pricing.

A card set is one TOML file (the reference set is ``configs/trisk/cards.toml``,
ruling R1); this module checks every field of it, builds the int64 card table
the numba engine reads (layout in :mod:`sims.trisk.cards`), and prices every
card with the written point budget (``configs/trisk/BUDGET.md``). Reference
decks (``configs/trisk/decks.toml``) are read into :class:`Deck` objects.

Every mistake in a file becomes ONE line of :class:`balance.errors.UserError`
naming the file, the card (or skill, or deck) and the field, and what is
allowed, so a designer editing a set by hand sees exactly what to fix.
"""

from __future__ import annotations

import difflib
import hashlib
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from balance import resources
from balance.config import load_toml
from balance.errors import UserError
from balance.games.trisk import GAME
from sims.trisk import cards as C

TRISK_DIR = GAME.configs
REFERENCE_SET = TRISK_DIR / "cards.toml"
# the sets known by name (not a path): a run key keeps the name; any other
# card_set is a path, which a key replaces by the set's digest
# (balance.runner.key_rules)
NAMED_SETS = ("reference",)
REFERENCE_DECKS = TRISK_DIR / "decks.toml"

FINISHES = ("Common", "Radiant", "Signed")
MIN_NEUTRAL = 4  # neutral copies a reference deck must hold (swap-in slots)

# Allowed ranges of the numeric card fields (inclusive).
RANGES = {
    "id": (1, 10**6),
    "mig": (0, C.MAX_STAT),
    "cun": (0, C.MAX_STAT),
    "wis": (0, C.MAX_STAT),
    "hp": (1, 20),
    "ap": (0, 10),
    "mp": (0, 10),
    "armor": (0, 3),
    "attack": (0, C.MAX_LEVEL),
    "level": (0, C.MAX_LEVEL),
    "n": (0, 10),
}
STATS = ("mig", "cun", "wis")
TOP_KEYS = ("name", "description", "neutral", "kinds", "groups", "budget", "skills", "card")
CARD_KEYS = (
    "id",
    "name",
    "set",
    "finishes",
    "type",
    "kind",
    "onto",
    "mig",
    "cun",
    "wis",
    "hp",
    "ap",
    "mp",
    "armor",
    "flying",
    "resist",
    "weak",
    "group",
    "attack",
    "abilities",
    "spell",
    "text",
)
# a card's identity: shown, never played (every other field is in C.READ_FIELDS)
IDENTITY_KEYS = ("id", "name", "set", "finishes", "type", "text")
# why play never reads a field on a Primal (the loader's refusal says it)
NOT_ON_PRIMAL = {
    "attack": "every Primal's Attack unlocks at the rules key primal_attack_level, "
    "10 by default: 'At level 10 its Attack unlocks'",
    "abilities": "only creations use abilities",
    "group": "a group counts creations only",
}
ABILITY_KEYS = ("skill", "shape", "level")
SKILL_KEYS = ("effect", "target", "n", "status", "damage", "coins", "group", "text")
COINS = ("none", "one", "per_group")
# Fields a Sorcery must not carry: it has only a name header and a spell.
NOT_ON_SORCERY = (
    "mig",
    "cun",
    "wis",
    "hp",
    "ap",
    "mp",
    "armor",
    "flying",
    "resist",
    "weak",
    "group",
    "attack",
    "abilities",
    "onto",
)

# Which targets make sense for each effect; the engine relies on this (a heal
# never lands on an enemy, a draw always goes to the player).
OWN_SIDE = ("self", "own_creation", "own_primal")
ENEMY_SIDE = ("enemy_creation", "enemy_primal", "all_enemy_creations", "enemy_any")
EFFECT_TARGETS = {
    "status": OWN_SIDE + ENEMY_SIDE,
    "heal": OWN_SIDE,
    "damage": ENEMY_SIDE,
    "cleanse": OWN_SIDE,
    "level": OWN_SIDE,
    "draw": ("player",),
    "regen": ("self",),
    "grow": ("self",),
    "ward": ("self",),
    "pack": ("self",),
}
# What a sorcery's spell may target (rulebook "Sorceries": a Blessing on one of
# your creations, a Curse on an enemy creation; a Ritual is cast on one of your
# creations, which is sacrificed, and its effect then lands on the target its
# skill names, never a Primal: sorceries can't target Primals).
SORCERY_TARGETS = {
    "Blessing": ("own_creation",),
    "Curse": ("enemy_creation",),
    "Ritual": ("enemy_creation", "all_enemy_creations", "player"),
}
PASSIVE_NAMES = tuple(C.EFFECT_NAMES[e] for e in C.PASSIVE_EFFECTS)

# Keys of [budget]: scalars, then tables keyed by a vocabulary.
BUDGET_SCALARS = (
    "creation",
    "upgrade_step",
    "sorcery",
    "hp",
    "ap",
    "mp",
    "armor",
    "flying",
    "shade",
    "attack",
    "unlock",
    "primal_mp",
    "ritual_x",
    "ritual_sacrifice",
)
BUDGET_TABLES = {
    "resist": C.DAMAGE_TYPES,
    "weak": C.DAMAGE_TYPES,
    "damage": C.DAMAGE_TYPES,
    "status": C.STATUSES,
    "status_own": C.STATUSES,
    "effect": ("heal", "cleanse", "level", "draw", "regen", "grow", "ward", "pack"),
    "target": C.TARGETS,
    "coins": COINS,
}


# ---- small helpers -------------------------------------------------------------
def _show(path: Path) -> str:
    """The path as a user would type it: relative to the repository when inside it."""
    return resources.shown(path)


def _load_toml(path: Path) -> dict:

    return load_toml(path, _show(path))


def _close(word: str, choices) -> str:
    """'; did you mean ...' for a mistyped name, or '' when nothing is close."""
    lower = {c.lower(): c for c in choices}
    hits = difflib.get_close_matches(word.lower(), list(lower), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(repr(lower[h]) for h in hits)}?" if hits else ""


class _Where:
    """Builds the one-line messages for one file: ``file: card 'X': field 'f' ...``."""

    def __init__(self, path: Path):
        self.file = _show(path)

    def fail(self, where: str, msg: str) -> None:
        raise UserError(f"{self.file}: {where}: {msg}")

    def int_in(self, where: str, key: str, value, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(where, f"field '{key}' must be an integer, got {value!r}")
        if not lo <= value <= hi:
            self.fail(where, f"field '{key}' = {value} is out of range; allowed {lo}..{hi}")
        return value

    def one_of(self, where: str, key: str, value, allowed) -> str:
        if not isinstance(value, str) or value not in allowed:
            self.fail(
                where,
                f"field '{key}' = {value!r} is not allowed; "
                f"allowed: {', '.join(map(str, allowed))}",
            )
        return value

    def keys(self, where: str, table, allowed) -> None:
        if not isinstance(table, dict):
            self.fail(where, f"must be a table, got {table!r}")
        for key in table:
            if key not in allowed:
                self.fail(where, f"unknown field '{key}'; allowed: {', '.join(allowed)}")

    def names(self, where: str, key: str, value, allowed) -> list[str]:
        if not isinstance(value, list):
            self.fail(where, f"field '{key}' must be a list, got {value!r}")
        for item in value:
            self.one_of(where, key, item, allowed)
        if len(set(value)) != len(value):
            self.fail(where, f"field '{key}' lists a value twice: {value!r}")
        return value


# ---- the card set ----------------------------------------------------------------
@dataclass(frozen=True)
class CardSet:
    """A validated card set: the cards as read, their int64 table and their budget.

    Attributes
    ----------
    path : Path
        The TOML file it was read from.
    name : str
        The set's ``name``.
    cards : list of dict
        The cards, normalised (every field present), in file order = table row order.
    names : tuple of str
        Card names by row.
    table : numpy.ndarray
        int64 ``[NC, CARD_W]``, columns as in :mod:`sims.trisk.cards`.
    skills : dict
        The Skill Book: skill name -> normalised skill dict.
    kinds, groups : tuple of str
        Creation kinds and groups; their positions are the ids in the table.
    neutral : int
        Row of the neutral filler card.
    primals : tuple of int
        Rows of the Primals.
    digest : str
        sha256 of the encoded table and the kinds/groups order. Names, finishes,
        text and the budget are not in it, so cosmetic edits keep run identities.
    budget : dict
        The ``[budget]`` costs (see ``configs/trisk/BUDGET.md``).
    description : str
        The set's ``description``.
    """

    path: Path
    name: str
    cards: list = field(hash=False, repr=False)
    names: tuple
    table: np.ndarray = field(hash=False, repr=False, compare=False)
    skills: dict = field(hash=False, repr=False)
    kinds: tuple
    groups: tuple
    neutral: int
    primals: tuple
    digest: str
    budget: dict = field(hash=False, repr=False)
    description: str = ""
    # (Primal row, card rows) of the decks :func:`bind_deck` found legal here: a run
    # binds its sides afresh, and a power test binds the same few hundred decks
    # tens of thousands of times
    legal_decks: set = field(default_factory=set, init=False, hash=False, repr=False, compare=False)

    @property
    def n_cards(self) -> int:
        """Number of cards (rows), Primals included."""
        return len(self.cards)

    def row(self, name: str) -> int:
        """Row of the card called ``name`` (case-insensitive).

        Raises
        ------
        UserError
            Unknown name; the message lists close matches.
        """
        lower = [n.lower() for n in self.names]
        key = str(name).strip().lower()
        if key in lower:
            return lower.index(key)
        raise UserError(
            f"unknown Trisk card '{name}' in set '{self.name}'{_close(str(name), self.names)}"
        )

    def type_of(self, row: int) -> str:
        """'Primal', 'Creation', 'Upgrade' or 'Sorcery'."""
        return self.cards[row]["type"]

    def playable(self, primal_row: int) -> list[int]:
        """Non-Primal rows the Primal may play, in row order.

        A card is playable when none of its MIG, CUN, WIS exceeds the Primal's
        (rulebook "Your Primal"); sorceries have none, so every Primal casts them.
        """
        primal = self.cards[primal_row]
        if primal["type"] != "Primal":
            raise UserError(f"card '{primal['name']}' is not a Primal")
        return [
            r
            for r, c in enumerate(self.cards)
            if c["type"] != "Primal" and all(c[s] <= primal[s] for s in STATS)
        ]

    def points(self, row: int) -> float:
        """The card's value under the point budget (BUDGET.md)."""
        return card_points(self.cards[row], self.skills, self.budget)

    def budget_target(self, row: int) -> float | None:
        """The points the card must have: creation, upgrade (by chain depth) or
        sorcery budget; None for a Primal (Primals are exempt)."""
        card, b = self.cards[row], self.budget
        if card["type"] == "Creation":
            return float(b["creation"])
        if card["type"] == "Upgrade":
            return float(b["creation"] + b["upgrade_step"] * card["depth"])
        if card["type"] == "Sorcery":
            return float(b["sorcery"])
        return None

    def off_budget(self) -> list[tuple[str, float, float]]:
        """(name, points, target) of every non-Primal card not exactly on budget."""
        out = []
        for r in range(self.n_cards):
            target = self.budget_target(r)
            if target is not None and abs(self.points(r) - target) > 1e-9:
                out.append((self.names[r], self.points(r), target))
        return out


def load_card_set(name_or_path: str | Path = "reference", rules: dict | None = None) -> CardSet:
    """Read and validate a card set.

    Parameters
    ----------
    name_or_path : str or Path
        ``"reference"`` for ``configs/trisk/cards.toml``, else a path to a TOML file.
    rules : dict, optional
        The ruleset it is played under; only ``allow_draw_effects`` is read
        (default false: a card that draws is refused, ruling R3).

    Returns
    -------
    CardSet

    Raises
    ------
    UserError
        One line naming the file, the card and the field, for any malformed set,
        or naming the card and its skill when a card draws and the rules do not
        allow it.
    """
    path = REFERENCE_SET if str(name_or_path) == "reference" else Path(name_or_path)
    try:
        st = path.stat()
    except OSError:
        return _parse_set(path, _load_toml(path))  # the reader names the missing file
    cs = _cached_set(str(path), st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
    if not (rules or {}).get("allow_draw_effects", False):
        _checked_no_draw(cs)
    return cs


@lru_cache(maxsize=16)
def _checked_no_draw(cs: CardSet) -> None:
    """:func:`check_no_draw` once per set (a refusal is not cached: it raises)."""
    check_no_draw(cs)


def check_no_draw(cs: CardSet) -> None:
    """Refuse a set in which a card draws (rulebook: "Muster: Draw a card. This
    is the only way to draw"; ruling R3), naming the first such card.

    Raises
    ------
    UserError
        One line: the file, the card, its skill and the rules key that allows it.
    """
    for c in cs.cards:
        uses = ([("spell", c["spell"])] if c["spell"] else []) + [
            ("ability", a["skill"]) for a in c["abilities"]
        ]
        for what, skill in uses:
            if cs.skills[skill]["effect"] == "draw":
                raise UserError(
                    f"{_show(cs.path)}: card '{c['name']}': {what} '{skill}' has effect 'draw', "
                    "but Muster is the only way to draw (rulebook; ruling R3); set "
                    "allow_draw_effects = true in the ruleset to play a set whose cards draw"
                )


@lru_cache(maxsize=16)
def _cached_set(shown: str, dev: int, ino: int, mtime_ns: int, size: int) -> CardSet:
    """A set read once per file version (a run reads its ruleset's set for its
    key, its decks, its vector and its manifest: thousands of times in a power
    test); the file is known by its device and inode, not its resolved path."""
    path = Path(shown)
    return _parse_set(path, _load_toml(path))


def _parse_set(path: Path, doc: dict) -> CardSet:
    w = _Where(path)
    w.keys("top level", doc, TOP_KEYS)
    for key in ("name", "neutral", "kinds", "groups", "budget", "skills", "card"):
        if key not in doc:
            w.fail("top level", f"missing field '{key}'")
    if not isinstance(doc["name"], str) or not doc["name"]:
        w.fail("top level", f"field 'name' must be a non-empty string, got {doc['name']!r}")
    kinds = _name_list(w, doc, "kinds")
    groups = _name_list(w, doc, "groups")
    budget = _parse_budget(w, doc["budget"])
    if not isinstance(doc["skills"], dict):
        w.fail("top level", "field 'skills' must be a table of [skills.<Name>]")
    skills = {name: _parse_skill(w, name, s, groups) for name, s in doc["skills"].items()}
    if not isinstance(doc["card"], list) or not doc["card"]:
        w.fail("top level", "field 'card' must be a non-empty array of [[card]] tables")
    cards = [_parse_card(w, i, c, kinds, groups, skills) for i, c in enumerate(doc["card"])]

    _check_unique(w, cards)
    _check_upgrades(w, cards)
    primals = tuple(r for r, c in enumerate(cards) if c["type"] == "Primal")
    if not primals:
        w.fail("top level", "the set has no Primal; at least 1 is needed")
    neutral = _check_neutral(w, doc["neutral"], cards, skills, budget)

    table = encode_table(cards, skills, kinds, groups)
    h = hashlib.sha256(table.tobytes())
    h.update(("\x1f".join(kinds) + "\x1e" + "\x1f".join(groups)).encode())
    return CardSet(
        path=path,
        name=doc["name"],
        cards=cards,
        names=tuple(c["name"] for c in cards),
        table=table,
        skills=skills,
        kinds=tuple(kinds),
        groups=tuple(groups),
        neutral=neutral,
        primals=primals,
        digest=h.hexdigest(),
        budget=budget,
        description=str(doc.get("description", "")),
    )


def _name_list(w: _Where, doc: dict, key: str) -> list[str]:
    value = doc[key]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        w.fail("top level", f"field '{key}' must be a list of names, got {value!r}")
    if len(set(value)) != len(value):
        w.fail("top level", f"field '{key}' lists a name twice")
    return list(value)


def _parse_budget(w: _Where, table) -> dict:
    w.keys("[budget]", table, BUDGET_SCALARS + tuple(BUDGET_TABLES))
    out: dict = {}

    def number(where, key, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            w.fail(where, f"field '{key}' must be a number, got {value!r}")
        if not math.isfinite(value):  # nan would pass every budget check unnoticed
            w.fail(where, f"field '{key}' must be a finite number, got {value!r}")
        return float(value)

    for key in BUDGET_SCALARS:
        if key not in table:
            w.fail("[budget]", f"missing field '{key}'")
        out[key] = number("[budget]", key, table[key])
    for key, vocab in BUDGET_TABLES.items():
        where = f"[budget.{key}]"
        if key not in table:
            w.fail("[budget]", f"missing table '{key}'")
        w.keys(where, table[key], vocab)
        for v in vocab:
            if v not in table[key]:
                w.fail(where, f"missing field '{v}'")
        out[key] = {v: number(where, v, table[key][v]) for v in vocab}
    return out


def _parse_skill(w: _Where, name: str, s, groups: list[str]) -> dict:
    where = f"skill '{name}'"
    w.keys(where, s, SKILL_KEYS)
    for key in ("effect", "target", "text"):
        if key not in s:
            w.fail(where, f"missing field '{key}'")
    effect = w.one_of(where, "effect", s["effect"], C.EFFECT_NAMES)
    target = w.one_of(where, "target", s["target"], C.TARGETS)
    if target not in EFFECT_TARGETS[effect]:
        w.fail(
            where,
            f"field 'target' = {target!r} is not allowed for effect '{effect}'; "
            f"allowed: {', '.join(EFFECT_TARGETS[effect])}",
        )
    n = s.get("n", 1)
    if n != "X":
        w.int_in(where, "n", n, *RANGES["n"])
    status = damage = group = None
    if effect == "status":
        if "status" not in s:
            w.fail(where, "missing field 'status' (effect 'status')")
        status = w.one_of(where, "status", s["status"], C.STATUSES)
    elif "status" in s:
        w.fail(where, f"field 'status' is only for effect 'status', not '{effect}'")
    if effect == "damage":
        if "damage" not in s:
            w.fail(where, "missing field 'damage' (effect 'damage')")
        damage = w.one_of(where, "damage", s["damage"], C.DAMAGE_TYPES)
    elif "damage" in s:
        w.fail(where, f"field 'damage' is only for effect 'damage', not '{effect}'")
    coins = w.one_of(where, "coins", s.get("coins", "none"), COINS)
    if coins == "per_group" or effect == "pack":
        if "group" not in s:
            w.fail(
                where, "missing field 'group' (coins 'per_group' and effect 'pack' count a group)"
            )
        group = w.one_of(where, "group", s["group"], groups)
    elif "group" in s:
        w.fail(where, "field 'group' is only for coins 'per_group' or effect 'pack'")
    if not isinstance(s["text"], str) or not s["text"]:
        w.fail(where, "field 'text' must be a non-empty string")
    return {
        "name": name,
        "effect": effect,
        "target": target,
        "n": n,
        "status": status,
        "damage": damage,
        "coins": coins,
        "group": group,
        "text": s["text"],
    }


def _parse_card(w: _Where, i: int, c, kinds, groups, skills) -> dict:
    label = c.get("name") if isinstance(c, dict) else None
    where = f"card '{label}'" if isinstance(label, str) else f"card #{i + 1}"
    w.keys(where, c, CARD_KEYS)
    for key in ("id", "name", "set", "finishes", "type"):
        if key not in c:
            w.fail(where, f"missing field '{key}'")
    if not isinstance(c["name"], str) or not c["name"].strip():
        w.fail(where, f"field 'name' must be a non-empty string, got {c['name']!r}")
    if not isinstance(c["set"], str) or not c["set"]:
        w.fail(where, f"field 'set' must be a non-empty string, got {c['set']!r}")
    ctype = w.one_of(where, "type", c["type"], C.TYPES)
    finishes = w.names(where, "finishes", c["finishes"], FINISHES)
    if not finishes:
        w.fail(where, f"field 'finishes' is empty; allowed: {', '.join(FINISHES)}")
    card = {
        "id": w.int_in(where, "id", c["id"], *RANGES["id"]),
        "name": c["name"],
        "set": c["set"],
        "finishes": list(finishes),
        "type": ctype,
        "text": str(c.get("text", "")),
        "kind": None,
        "onto": None,
        "group": None,
        "flying": False,
        "resist": [],
        "weak": [],
        "attack": None,
        "abilities": [],
        "spell": None,
        "depth": 0,
    }

    if ctype == "Sorcery":
        for key in NOT_ON_SORCERY:
            if key in c:
                w.fail(
                    where,
                    f"field '{key}' is not allowed on a Sorcery (sorceries have "
                    "no stats, attributes or abilities, only a spell)",
                )
        for key in STATS + ("hp", "ap", "mp", "armor"):
            card[key] = 0
        card["kind"] = w.one_of(where, "kind", c.get("kind"), C.SORCERY_KINDS)
        if "spell" not in c:
            w.fail(where, "missing field 'spell' (the Skill Book entry it casts)")
        spell = c["spell"]
        if spell not in skills:
            w.fail(
                where,
                f"field 'spell' = {spell!r} is not in the Skill Book{_close(str(spell), skills)}",
            )
        sk = skills[spell]
        if sk["effect"] in PASSIVE_NAMES:
            w.fail(
                where,
                f"field 'spell' = {spell!r} has passive effect '{sk['effect']}'; "
                "a spell takes effect once",
            )
        allowed = SORCERY_TARGETS[card["kind"]]
        if sk["target"] not in allowed:
            w.fail(
                where,
                f"field 'spell' = {spell!r} targets '{sk['target']}'; a "
                f"{card['kind']} allows: {', '.join(allowed)}",
            )
        card["spell"] = spell
        return card

    if "spell" in c:
        w.fail(where, f"field 'spell' is only for a Sorcery, not a {ctype}")
    for key in STATS + ("ap", "mp", "armor"):
        card[key] = w.int_in(where, key, c.get(key, 0), *RANGES[key])
    if "hp" not in c:
        w.fail(where, "missing field 'hp'")
    card["hp"] = w.int_in(where, "hp", c["hp"], *RANGES["hp"])
    flying = c.get("flying", False)
    if not isinstance(flying, bool):
        w.fail(where, f"field 'flying' must be true or false, got {flying!r}")
    card["flying"] = flying
    card["resist"] = w.names(where, "resist", c.get("resist", []), C.DAMAGE_TYPES)
    card["weak"] = w.names(where, "weak", c.get("weak", []), C.DAMAGE_TYPES)
    both = set(card["resist"]) & set(card["weak"])
    if both:
        w.fail(where, f"fields 'resist' and 'weak' both name {sorted(both)}")
    if "group" in c:
        card["group"] = w.one_of(where, "group", c["group"], groups)
    if ctype == "Primal":
        if "kind" in c or "onto" in c:
            w.fail(where, "fields 'kind' and 'onto' are not for a Primal")
        # read it or refuse it: a field play never reads on a Primal
        # (C.READ_FIELDS) would let a designer's set change nothing
        for key in c:
            if key not in IDENTITY_KEYS and key not in C.READ_FIELDS["Primal"]:
                w.fail(
                    where,
                    f"field '{key}' is not allowed on a Primal ({NOT_ON_PRIMAL[key]}); "
                    f"a Primal allows: {', '.join(C.READ_FIELDS['Primal'])}",
                )
    else:
        if "kind" not in c:
            w.fail(where, f"missing field 'kind' (a {ctype} has a kind)")
        card["kind"] = w.one_of(where, "kind", c["kind"], kinds)
        if ctype == "Upgrade":
            if "onto" not in c:
                w.fail(where, "missing field 'onto' (the kind an Upgrade goes onto)")
            card["onto"] = w.one_of(where, "onto", c["onto"], kinds)
        elif "onto" in c:
            w.fail(where, "field 'onto' is only for an Upgrade")
        if "attack" in c:
            card["attack"] = w.int_in(where, "attack", c["attack"], *RANGES["attack"])

    abilities = c.get("abilities", [])
    if not isinstance(abilities, list):
        w.fail(where, f"field 'abilities' must be a list, got {abilities!r}")
    if len(abilities) > C.MAX_ABIL:
        w.fail(
            where, f"field 'abilities' has {len(abilities)} abilities; allowed at most {C.MAX_ABIL}"
        )
    for a in abilities:
        w.keys(f"{where}: field 'abilities'", a, ABILITY_KEYS)
        for key in ABILITY_KEYS:
            if key not in a:
                w.fail(where, f"field 'abilities' entry {a!r} is missing '{key}'")
        skill = a["skill"]
        if skill not in skills:
            w.fail(
                where,
                f"field 'abilities' names skill {skill!r}, not in the Skill Book"
                f"{_close(str(skill), skills)}",
            )
        shape = w.one_of(where, "shape", a["shape"], ("active", "passive"))
        level = w.int_in(where, "level", a["level"], *RANGES["level"])
        passive_effect = skills[skill]["effect"] in PASSIVE_NAMES
        if passive_effect and shape == "active":
            w.fail(
                where,
                f"field 'abilities': skill {skill!r} has passive effect "
                f"'{skills[skill]['effect']}' but shape 'active'; use 'passive'",
            )
        if not passive_effect and shape == "passive":
            w.fail(
                where,
                f"field 'abilities': skill {skill!r} has active effect "
                f"'{skills[skill]['effect']}' but shape 'passive'; passive "
                f"effects are {', '.join(PASSIVE_NAMES)}",
            )
        card["abilities"].append({"skill": skill, "shape": shape, "level": level})
    return card


def _check_unique(w: _Where, cards: list[dict]) -> None:
    seen_id: dict = {}
    seen_name: dict = {}
    for c in cards:
        if c["id"] in seen_id:
            w.fail(
                f"card '{c['name']}'",
                f"field 'id' = {c['id']} is already used by card '{seen_id[c['id']]}'",
            )
        seen_id[c["id"]] = c["name"]
        key = c["name"].lower()
        if key in seen_name:
            w.fail(f"card '{c['name']}'", f"field 'name' duplicates card '{seen_name[key]}'")
        seen_name[key] = c["name"]


def _check_upgrades(w: _Where, cards: list[dict]) -> None:
    """Every Upgrade must go onto a kind some card in play can have, and its
    chain must reach a Creation; the chain depth prices it (BUDGET.md)."""
    upgrades = [c for c in cards if c["type"] == "Upgrade"]
    for c in upgrades:
        if not any(o["kind"] == c["onto"] for o in cards if o["type"] in ("Creation", "Upgrade")):
            w.fail(
                f"card '{c['name']}'",
                f"field 'onto' = {c['onto']!r}: no Creation or "
                "Upgrade has that kind, so it can never be played",
            )

    def kind_depth(kind: str, seen: frozenset) -> int | None:
        # Deepest chain a card of this kind can sit at; None if no chain
        # reaches a Creation without looping through a kind already on the path.
        if kind in seen:
            return None
        best = None
        for o in cards:
            if o["kind"] != kind or o["type"] not in ("Creation", "Upgrade"):
                continue
            below = 0 if o["type"] == "Creation" else kind_depth(o["onto"], seen | {kind})
            d = None if below is None else below + (o["type"] == "Upgrade")
            if d is not None and (best is None or d > best):
                best = d
        return best

    for c in upgrades:
        below = kind_depth(c["onto"], frozenset())
        if below is None:
            w.fail(
                f"card '{c['name']}'",
                f"field 'onto' = {c['onto']!r}: the upgrade "
                "chain never reaches a Creation (it loops)",
            )
        c["depth"] = below + 1


def _check_neutral(w: _Where, name, cards, skills, budget) -> int:
    names = [c["name"] for c in cards]
    if not isinstance(name, str) or name not in names:
        w.fail(
            "top level",
            f"field 'neutral' = {name!r} is not a card in the set{_close(str(name), names)}",
        )
    row = names.index(name)
    c = cards[row]
    where = f"card '{name}'"
    if c["type"] != "Creation":
        w.fail(where, f"field 'type' = {c['type']!r}: the neutral filler must be a Creation")
    for s in STATS:
        if c[s] != 0:
            w.fail(
                where,
                f"field '{s}' = {c[s]}: the neutral filler must be 000 so every Primal can play it",
            )
    if c["abilities"] or c["armor"] or c["flying"] or c["resist"] or c["weak"]:
        w.fail(
            where,
            "field 'abilities': the neutral filler must be vanilla (no abilities, "
            "armor, flying, resist or weak)",
        )
    pts, target = card_points(c, skills, budget), budget["creation"]
    if abs(pts - target) > 1e-9:
        w.fail(
            where,
            f"field 'hp': the neutral filler has {pts:g} points; it must be "
            f"exactly on the creation budget {target:g}",
        )
    return row


# ---- encoding ----------------------------------------------------------------------
def _mask(types: list[str]) -> int:
    return sum(1 << C.DAMAGE_TYPES.index(t) for t in types)


def _ability_block(skill: dict, shape: int, level: int, groups) -> list[int]:
    block = [0] * C.A_W
    block[C.A_SHAPE] = shape
    block[C.A_LEVEL] = level
    block[C.A_EFFECT] = C.EFFECT_NAMES.index(skill["effect"])
    block[C.A_TARGET] = C.TARGETS.index(skill["target"])
    block[C.A_N] = C.X_AMOUNT if skill["n"] == "X" else int(skill["n"])
    if skill["status"] is not None:
        block[C.A_PARAM] = C.STATUSES.index(skill["status"])
    elif skill["damage"] is not None:
        block[C.A_PARAM] = C.DAMAGE_TYPES.index(skill["damage"])
    else:
        block[C.A_PARAM] = -1
    block[C.A_COINS] = COINS.index(skill["coins"])
    block[C.A_GROUP] = groups.index(skill["group"]) if skill["group"] is not None else -1
    return block


def encode_table(cards: list[dict], skills: dict, kinds, groups) -> np.ndarray:
    """The int64 ``[NC, CARD_W]`` table of normalised cards (layout: sims.trisk.cards).

    Unused ability blocks are all zeros; ``C_N_ABIL`` says how many are in use.
    """
    kinds, groups = list(kinds), list(groups)
    table = np.zeros((len(cards), C.CARD_W), dtype=np.int64)
    for r, c in enumerate(cards):
        t = table[r]
        t[C.C_TYPE] = C.TYPES.index(c["type"])
        if c["type"] == "Sorcery":
            t[C.C_KIND] = C.SORCERY_KINDS.index(c["kind"])
        elif c["type"] == "Primal":
            t[C.C_KIND] = -1
        else:
            t[C.C_KIND] = kinds.index(c["kind"])
        t[C.C_ONTO] = kinds.index(c["onto"]) if c["onto"] is not None else -1
        t[C.C_MIG], t[C.C_CUN], t[C.C_WIS] = c["mig"], c["cun"], c["wis"]
        t[C.C_HP], t[C.C_AP], t[C.C_MP], t[C.C_ARMOR] = c["hp"], c["ap"], c["mp"], c["armor"]
        t[C.C_FLYING] = int(c["flying"])
        t[C.C_RESIST] = _mask(c["resist"])
        t[C.C_WEAK] = _mask(c["weak"])
        t[C.C_ATTACK_LEVEL] = -1 if c["attack"] is None else c["attack"]
        t[C.C_GROUP] = groups.index(c["group"]) if c["group"] is not None else -1
        if c["type"] == "Sorcery":
            blocks = [_ability_block(skills[c["spell"]], C.SHAPE_SPELL, 0, groups)]
        else:
            blocks = [
                _ability_block(skills[a["skill"]], C.SHAPES[a["shape"]], a["level"], groups)
                for a in c["abilities"]
            ]
        t[C.C_N_ABIL] = len(blocks)
        for i, block in enumerate(blocks):
            t[C.C_ABIL + i * C.A_W : C.C_ABIL + (i + 1) * C.A_W] = block
    return table


# ---- the point budget (configs/trisk/BUDGET.md) ---------------------------------------
def _amount(skill: dict, card: dict, b: dict) -> float:
    """The amount priced: n, or X read as the card's own MP (an ability), the
    Primal's MP (a Blessing or Curse) or the assumed sacrificed MP (a Ritual)."""
    if skill["effect"] == "ward":
        return 1.0  # ward is on or off; its n means nothing
    if skill["n"] != "X":
        return float(skill["n"])
    if card["type"] != "Sorcery":
        return float(card["mp"])
    return b["ritual_x"] if card["kind"] == "Ritual" else b["primal_mp"]


def skill_points(skill: dict, card: dict, b: dict) -> float:
    """Undiscounted value of one use of ``skill`` on ``card``:
    unit cost x amount x target factor x coin factor."""
    effect = skill["effect"]
    if effect == "status":
        table = b["status_own"] if skill["target"] in OWN_SIDE else b["status"]
        unit = table[skill["status"]]
    elif effect == "damage":
        unit = b["damage"][skill["damage"]]
    else:
        unit = b["effect"][effect]
    return (
        unit * _amount(skill, card, b) * b["target"][skill["target"]] * b["coins"][skill["coins"]]
    )


def _unlocked(value: float, level: int, b: dict) -> float:
    """A later unlock costs ``unlock`` points per level, never below nothing;
    a drawback (negative value) is not discounted."""
    return max(0.0, value - b["unlock"] * level) if value > 0 else value


def card_points(card: dict, skills: dict, b: dict) -> float:
    """The card's points under budget ``b`` (BUDGET.md); rounded to 1e-9."""
    if card["type"] == "Sorcery":
        pts = skill_points(skills[card["spell"]], card, b)
        if card["kind"] == "Ritual":
            pts -= b["ritual_sacrifice"]
        return round(pts, 9)
    pts = (
        b["hp"] * card["hp"]
        + b["ap"] * card["ap"]
        + b["mp"] * card["mp"]
        + b["armor"] * card["armor"]
        + b["flying"] * card["flying"]
        + b["shade"] * sum(card[s] for s in STATS)
        + sum(b["resist"][t] for t in card["resist"])
        - sum(b["weak"][t] for t in card["weak"])
    )
    if card["attack"] is not None:
        pts += _unlocked(b["attack"], card["attack"], b)
    for a in card["abilities"]:
        pts += _unlocked(skill_points(skills[a["skill"]], card, b), a["level"], b)
    return round(pts, 9)


# ---- decks -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Deck:
    """A Trisk deck: one Primal and its cards.

    Attributes
    ----------
    name : str
        Deck name (a reference deck is named after its Primal).
    primal : int
        Row of the Primal.
    cards : tuple of int
        Card rows in a fixed order: the neutral copies first, then the rest by
        row, so swap-in replaces position 0 and the shuffles stay paired.
    neutral : int
        Row of the set's neutral filler (what :meth:`swap_in` replaces).
    strategy : str or None
        The deck's default strategy, when its file names one.
    card_names : tuple of str
        The set's names by row, for readable swap-in names (not compared).
    """

    name: str
    primal: int
    cards: tuple
    neutral: int
    strategy: str | None = None
    card_names: tuple = field(default=(), compare=False, repr=False)

    @property
    def size(self) -> int:
        """Number of cards (the Primal is not counted)."""
        return len(self.cards)

    @property
    def primal_name(self) -> str | None:
        """The Primal's name (None when the deck does not know its set's names)."""
        return self.card_names[self.primal] if self.primal < len(self.card_names) else None

    @property
    def names(self) -> tuple | None:
        """The cards' names, in deck order (None when the deck does not know its
        set's names)."""
        if not self.card_names or any(r >= len(self.card_names) for r in self.cards):
            return None
        return tuple(self.card_names[r] for r in self.cards)

    def swap_in(self, row: int, copies: int = 1) -> Deck:
        """The deck with its first ``copies`` neutral copies replaced by card ``row``
        (same deck positions, so the shuffles stay paired with the reference deck).

        Raises
        ------
        UserError
            The deck holds fewer than ``copies`` neutral copies.
        """
        have = self.cards.count(self.neutral)
        if copies < 1 or have < copies:
            raise UserError(
                f"deck '{self.name}' has {have} neutral "
                f"cop{'y' if have == 1 else 'ies'}; cannot swap in {copies}"
            )
        cards = list(self.cards)
        left = copies
        for i, c in enumerate(cards):
            if left and c == self.neutral:
                cards[i] = int(row)
                left -= 1
        label = self.card_names[row] if row < len(self.card_names) else str(row)
        if copies > 1:
            label = f"{label}×{copies}"
        return Deck(
            name=f"{self.name}+{label}",
            primal=self.primal,
            cards=tuple(cards),
            neutral=self.neutral,
            strategy=self.strategy,
            card_names=self.card_names,
        )


def _blocking_stat(cs: CardSet, primal_row: int, row: int) -> str | None:
    """'MIG 5 > 0' style reason a card is unplayable, or None when playable."""
    p, c = cs.cards[primal_row], cs.cards[row]
    for s in STATS:
        if c[s] > p[s]:
            return f"{s.upper()} {c[s]} > {p[s]}"
    return None


def check_deck(cardset: CardSet, primal_row: int, rows, where: str = "deck") -> None:
    """Refuse an illegal deck with one line (rulebook "Building a deck").

    Parameters
    ----------
    cardset : CardSet
    primal_row : int
        The deck's Primal.
    rows : iterable of int
        The deck's cards.
    where : str
        What to call the deck in the message.

    Raises
    ------
    UserError
        Not exactly one Primal, an unknown card, or a card the Primal cannot play.
    """
    nc = cardset.n_cards
    if (
        not (isinstance(primal_row, (int, np.integer)) and 0 <= primal_row < nc)
        or cardset.type_of(int(primal_row)) != "Primal"
    ):
        raise UserError(
            f"{where}: its leader (row {primal_row}) is not a Primal of set '{cardset.name}'"
        )
    pname = cardset.names[primal_row]
    for r in rows:
        if not (isinstance(r, (int, np.integer)) and 0 <= r < nc):
            raise UserError(f"{where}: unknown card (row {r!r}); the set has rows 0..{nc - 1}")
        if cardset.type_of(int(r)) == "Primal":
            raise UserError(
                f"{where}: a deck has exactly one Primal ('{pname}'); it also "
                f"holds Primal '{cardset.names[r]}'"
            )
        why = _blocking_stat(cardset, int(primal_row), int(r))
        if why:
            raise UserError(f"{where}: Primal '{pname}' cannot play '{cardset.names[r]}' ({why})")


def make_deck(
    cardset: CardSet,
    name: str,
    primal_row: int,
    rows,
    strategy: str | None = None,
    where: str | None = None,
) -> Deck:
    """A checked :class:`Deck` with its cards in the fixed order (neutral first)."""
    rows = [int(r) for r in rows]
    check_deck(cardset, primal_row, rows, where or f"deck '{name}'")
    neutral = [r for r in rows if r == cardset.neutral]
    rest = sorted(r for r in rows if r != cardset.neutral)
    return Deck(
        name=name,
        primal=int(primal_row),
        cards=tuple(neutral + rest),
        neutral=cardset.neutral,
        strategy=strategy,
        card_names=cardset.names,
    )


def bind_deck(cardset: CardSet, deck, where: str = "deck") -> Deck:
    """``deck`` as played with ``cardset``: its Primal and cards looked up by NAME
    in that set, in the deck's own order, and checked (rulebook "Building a deck").

    A deck is a list of named cards: built against one set (the reference set,
    or the set a stored run was played with), it plays the same named cards
    with any set that holds them, whatever their rows there. A deck that does
    not know its names (a run stored before decks recorded them) is taken as
    rows of ``cardset`` and only checked.

    Parameters
    ----------
    cardset : CardSet
        The set in force (the ruleset's).
    deck : Deck or balance.config.StoredDeck
        Anything with ``name``, ``primal``, ``cards`` and, when known,
        ``primal_name`` and ``names`` (the cards' names in deck order).
    where : str
        What to call the deck in a message (e.g. the side and the rules).

    Returns
    -------
    Deck
        Rows of ``cardset``; the same object when ``deck`` already is.

    Raises
    ------
    UserError
        One line naming the deck and the card: a card or the Primal not in the
        set, a leader that is not a Primal, a second Primal, or a card the
        Primal cannot play (one of MIG, CUN, WIS above its own).
    """
    pname, names = getattr(deck, "primal_name", None), getattr(deck, "names", None)

    def fail(msg: str):  # the set is named only when something is wrong (a path costs)
        raise UserError(f"{where} (card set '{cardset.name}', {_show(cardset.path)}): {msg}")

    def check(primal_row, rows) -> None:
        try:
            check_deck(cardset, primal_row, rows, where)
        except UserError as exc:
            fail(str(exc)[len(where) + 2 :])

    if isinstance(deck, Deck) and deck.card_names == cardset.names:
        if (deck.primal, deck.cards) not in cardset.legal_decks:  # same rows: check only
            check(deck.primal, deck.cards)
            cardset.legal_decks.add((deck.primal, deck.cards))
        return deck
    if pname is None or names is None:  # rows of the set in force, as recorded
        primal, rows = int(deck.primal), tuple(int(r) for r in deck.cards)
        check(primal, rows)
    else:
        lower = {n.lower(): r for r, n in enumerate(cardset.names)}
        primal = lower.get(str(pname).strip().lower())
        if primal is None:
            fail(f"its Primal '{pname}' is not in the set{_close(str(pname), cardset.names)}")
        if cardset.type_of(primal) != "Primal":
            fail(f"its leader '{pname}' is a {cardset.type_of(primal)} in the set, not a Primal")
        rows = []
        for n in names:
            r = lower.get(str(n).strip().lower())
            if r is None:
                fail(f"card '{n}' is not in the set{_close(str(n), cardset.names)}")
            rows.append(r)
        rows = tuple(rows)
        check(primal, rows)
    return Deck(
        name=deck.name,
        primal=primal,
        cards=rows,
        neutral=cardset.neutral,
        strategy=getattr(deck, "strategy", None),
        card_names=cardset.names,
    )


def load_decks(cardset: CardSet, path: str | Path | None = None) -> dict[str, Deck]:
    """Read the decks file (default ``configs/trisk/decks.toml``).

    Format: ``[deck."<name>"]`` with ``cards = { "<card>" = copies, ... }``,
    optional ``strategy = "<name>"`` and optional ``primal = "<Primal>"`` (default:
    the deck's name is its Primal's). Each deck needs at least ``MIN_NEUTRAL``
    copies of the neutral filler (the swap-in slots).

    Returns
    -------
    dict
        Deck name -> :class:`Deck`, in file order.
    """
    path = REFERENCE_DECKS if path is None else Path(path)
    doc = _load_toml(path)
    w = _Where(path)
    w.keys("top level", doc, ("deck", "description"))
    if not isinstance(doc.get("deck"), dict) or not doc["deck"]:
        w.fail("top level", "missing [deck.<name>] tables")
    out = {}
    neutral_name = cardset.names[cardset.neutral]
    for name, d in doc["deck"].items():
        where = f"deck '{name}'"
        w.keys(where, d, ("primal", "strategy", "cards", "text"))
        pname = d.get("primal", name)
        try:
            primal = cardset.row(pname)
        except UserError as exc:
            w.fail(where, f"field 'primal': {exc}")
        if cardset.type_of(primal) != "Primal":
            w.fail(where, f"field 'primal' = {pname!r} is not a Primal")
        strategy = d.get("strategy")
        if strategy is not None and (not isinstance(strategy, str) or not strategy):
            w.fail(where, f"field 'strategy' must be a strategy name, got {strategy!r}")
        if not isinstance(d.get("cards"), dict) or not d["cards"]:
            w.fail(where, "field 'cards' must be a table { \"<card>\" = copies, ... }")
        rows = []
        for card, copies in d["cards"].items():
            try:
                row = cardset.row(card)
            except UserError as exc:
                w.fail(where, f"field 'cards': {exc}")
            w.int_in(where, f"cards.{card}", copies, 1, 99)
            rows += [row] * copies
        deck = make_deck(
            cardset, name, primal, rows, strategy, where=f"{w.file}: {where}: field 'cards'"
        )
        if deck.cards.count(cardset.neutral) < MIN_NEUTRAL:
            w.fail(
                where,
                f"field 'cards' holds {deck.cards.count(cardset.neutral)} "
                f"'{neutral_name}'; at least {MIN_NEUTRAL} neutral copies are "
                "needed for swap-in",
            )
        out[name] = deck
    return out


def random_deck(
    cardset: CardSet, primal_row: int, size: int, rng: np.random.Generator
) -> tuple[int, ...]:
    """A legal deck of ``size`` cards drawn uniformly, with replacement, from the
    Primal's playable cards (for the regression test); rows sorted."""
    pool = np.asarray(cardset.playable(primal_row), dtype=np.int64)
    return tuple(int(r) for r in np.sort(rng.choice(pool, size=size, replace=True)))


# ---- tables for `balance trisk cards` / `balance trisk skills` ------------------------------
def _amount_text(n) -> str:
    return "X" if n == "X" else str(n)


def skill_text(skill: dict) -> str:
    """A short readable form of a skill, e.g. ``Asleep x3 -> self``."""
    e = skill["effect"]
    what = {"status": skill["status"], "damage": f"{skill['damage']} damage"}.get(e, e)
    s = f"{what} {_amount_text(skill['n'])}" if e != "ward" else what
    s += f" -> {skill['target']}"
    if skill["coins"] == "one":
        s += " (on heads)"
    elif skill["coins"] == "per_group":
        s += f" (a coin per {skill['group']}, one heads)"
    return s


def _ability_text(card: dict, skills: dict) -> list[str]:
    out = []
    if card["type"] == "Sorcery":
        return [f"{card['spell']}: {skill_text(skills[card['spell']])}"]
    if card["type"] == "Primal":
        out.append("Attack @primal_attack_level (a rules key, 10 by default)")
    if card["attack"] is not None:
        out.append(f"Attack @{card['attack']}")
    for a in card["abilities"]:
        out.append(f"{a['skill']} ({a['shape']} @{a['level']}): {skill_text(skills[a['skill']])}")
    return out


def card_rows(cardset: CardSet) -> list[dict]:
    """One dict per card for ``balance trisk cards``: identity, stats, abilities as
    text, points and budget target, and which Primals can play it."""
    players = {p: set(cardset.playable(p)) for p in cardset.primals}
    rows = []
    for r, c in enumerate(cardset.cards):
        attrs = ([f"Armor {c['armor']}"] if c["armor"] else []) + (
            ["Flying"] if c["flying"] else []
        )
        onto = c["onto"]
        rows.append(
            {
                "row": r,
                "id": c["id"],
                "name": c["name"],
                "set": c["set"],
                "finishes": ", ".join(c["finishes"]),
                "type": c["type"],
                "kind": c["kind"] or "",
                "onto": onto or "",
                "MIG": c["mig"],
                "CUN": c["cun"],
                "WIS": c["wis"],
                "HP": c["hp"],
                "AP": c["ap"],
                "MP": c["mp"],
                "attributes": ", ".join(attrs),
                "resist": ", ".join(c["resist"]),
                "weak": ", ".join(c["weak"]),
                "group": c["group"] or "",
                "attack": "" if c["attack"] is None else c["attack"],
                "abilities": "; ".join(_ability_text(c, cardset.skills)),
                "points": cardset.points(r),
                "target": cardset.budget_target(r),
                **_budget_fields(cardset, r),
                "primals": ""
                if c["type"] == "Primal"
                else ", ".join(cardset.names[p] for p in cardset.primals if r in players[p]),
            }
        )
        if c["type"] == "Primal":  # JSON: a null figure says why
            rows[-1]["why_null"] = {k: PRIMAL_EXEMPT for k in ("target", "off_by", "off_budget")}
    return rows


#: Why a Primal's budget figures are null in ``balance trisk cards --json``.
PRIMAL_EXEMPT = (
    "Primals are exempt from the point budget: every Primal has the same stats "
    "(ruling R1) and differs only in its code (R2)"
)


def _budget_fields(cardset: CardSet, row: int) -> dict:
    """A card's distance from its budget target: ``off_by`` = points − target
    (0 on budget) and ``off_budget`` (True when not exactly on it, BUDGET.md);
    both None for a Primal (exempt)."""
    target = cardset.budget_target(row)
    if target is None:
        return {"off_by": None, "off_budget": None}
    off = round(cardset.points(row) - target, 9)
    return {"off_by": off, "off_budget": bool(abs(off) > 1e-9)}


def skill_rows(cardset: CardSet) -> list[dict]:
    """One dict per Skill Book entry for ``balance trisk skills``: its effect and
    the cards that carry it (with shape and level)."""
    users: dict = {name: [] for name in cardset.skills}
    for c in cardset.cards:
        if c["type"] == "Sorcery":
            users[c["spell"]].append(f"{c['name']} ({c['kind']})")
        for a in c["abilities"]:
            users[a["skill"]].append(f"{c['name']} ({a['shape']} @{a['level']})")
    out = []
    for name, s in cardset.skills.items():
        out.append(
            {
                "skill": name,
                "effect": s["effect"],
                "param": s["status"] or s["damage"] or "",
                "target": s["target"],
                "amount": _amount_text(s["n"]),
                "coins": s["coins"],
                "group": s["group"] or "",
                "text": s["text"],
                "cards": "; ".join(users[name]),
            }
        )
    return out
