"""Loading and validating configs: rulesets, variants and strategies.

Everything a user writes (TOML files, variant names, strategy names) is
checked here, and every mistake becomes a one-line :class:`UserError` naming
the file, the key and what is allowed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from balance import resources
from balance.errors import UserError
from balance.paths import (
    check_keys,
    load_toml,  # noqa: F401  (re-exported: config.load_toml)
    readable_file,
)
from balance.registry import get_game
from kernels.contract import Side

# the shipped folders (balance.resources: the checkout's, or the wheel's package data)
CONFIG_DIR = resources.configs()
STRATEGY_DIR = resources.strategies()


def _number(path, key: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{path}: key '{key}' must be a number, got {value!r}")
    if not np.isfinite(value):
        raise UserError(f"{path}: key '{key}' must be finite, got {value!r}")
    return float(value)


# ---- rulesets and variants ---------------------------------------------------
@dataclass(frozen=True)
class Ruleset:
    """A resolved ruleset: base rules plus a set of variants."""

    game: str
    name: str  # canonical variant name, e.g. "base" or "force+momentum"
    variants: tuple[str, ...]
    rules: dict = field(hash=False)
    description: str = ""

    def vector(self) -> np.ndarray:
        g = get_game(self.game)
        if g.card_sets:  # the card table travels in the rules vector
            return g.engine_module().encode_rules(self.rules, self.card_set().table)
        return g.engine_module().encode_rules(self.rules)

    def card_set(self):
        """The card set this ruleset plays with (games with card sets only)."""
        return get_game(self.game).card_set(self.rules["card_set"], self.rules)


def _validate_rules(game: str, path, table: dict, partial: bool) -> dict:
    eng = get_game(game).engine_module()
    check_keys(path, "[rules]", table, eng.RULE_FIELDS)
    out = {}
    for key, value in table.items():
        default = eng.DEFAULT_RULES[key]
        if isinstance(default, str):  # a name or a path (e.g. Trisk's card_set)
            if not isinstance(value, str) or not value.strip():
                raise UserError(f"{path}: key '{key}' must be a non-empty string, got {value!r}")
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise UserError(f"{path}: key '{key}' must be true or false, got {value!r}")
        else:
            if isinstance(value, bool) or not isinstance(value, int):
                raise UserError(f"{path}: key '{key}' must be an integer, got {value!r}")
            lo, hi = eng.RULE_LIMITS.get(key, (0, 10**6))
            if not lo <= value <= hi:
                raise UserError(
                    f"{path}: key '{key}' = {value} is out of range; allowed {lo}..{hi}"
                )
        out[key] = value
    if not partial:
        missing = [k for k in eng.RULE_FIELDS if k not in out]
        if missing:
            raise UserError(f"{path}: [rules] is missing {', '.join(missing)}")
    return out


def _variant_file(game: str, name: str) -> Path:
    return get_game(game).configs / "variants" / f"{name}.toml"


def variant_names(game: str) -> list[str]:
    """The optional variants of a game, in file-name order."""
    return sorted(p.stem for p in (get_game(game).configs / "variants").glob("*.toml"))


def split_list(text: str, where: str, sep: str = ",") -> list[str]:
    """The items of a ``sep``-separated list, stripped; an empty item (two
    separators in a row, or one at an end: ``capacity=12,,13``, ``base++base``)
    is refused in one line rather than dropped.

    Raises
    ------
    UserError
        One line naming ``where``, the text and what is allowed.
    """
    items = [t.strip() for t in str(text).split(sep)]
    if any(not t for t in items):
        raise UserError(
            f"{where} '{text}': an item is empty (two '{sep}' in a row, or one at an end); "
            f"separate the items by single '{sep}'"
        )
    return items


def unique_name(text: str, allowed: list[str], what: str, hint: str = "") -> str:
    """``text`` as one of ``allowed``: the exact name (any case), else the one
    name it is a unique prefix of (``bat`` → ``battle-weary``).

    Raises
    ------
    UserError
        One line naming ``what`` and the names allowed (or those it could mean).
    """
    key = text.strip().lower()
    exact = [a for a in allowed if a.lower() == key]
    if exact:
        return exact[0]
    hits = [a for a in allowed if a.lower().startswith(key)] if key else []
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise UserError(f"{what} '{text}' is ambiguous: it could be {', '.join(hits)}")
    raise UserError(f"unknown {what} '{text}'; allowed: {', '.join(allowed)}{hint}")


def _load_rules_file(game: str, path: Path, partial: bool) -> tuple[dict, str]:
    data = load_toml(path)
    check_keys(path, "the top level", data, ["description", "rules"])
    rules = data.get("rules", {})
    if not isinstance(rules, dict):
        raise UserError(f"{path}: 'rules' must be a table")
    return _validate_rules(game, path, rules, partial), str(data.get("description", ""))


def is_rules_path(token: str) -> bool:
    """Whether a part of a variant spec names a TOML file rather than a variant."""
    return token.endswith(".toml") or "/" in token or "\\" in token


def parse_rule_value(game: str, key: str, text: str, where: str = "--rule"):
    """The value ``text`` of rule ``key``, typed like the rule's default
    (integer, true/false or a string) and checked against its bounds."""
    eng = get_game(game).engine_module()
    if key not in eng.RULE_FIELDS:
        raise UserError(
            f"{where}: unknown {game} rule '{key}'; allowed: {', '.join(eng.RULE_FIELDS)} "
            f"(balance {game} rules lists them)"
        )
    default = eng.DEFAULT_RULES[key]
    raw = text.strip()
    value: object = raw
    if isinstance(default, bool):
        low = raw.lower()
        if low not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
            raise UserError(f"{where}: rule '{key}' must be true or false, got '{raw}'")
        value = low in ("true", "1", "yes", "on")
    elif not isinstance(default, str):
        try:
            value = int(raw)
        except ValueError:
            raise UserError(f"{where}: rule '{key}' must be an integer, got '{raw}'") from None
    return _validate_rules(game, where, {key: value}, partial=True)[key]


def parse_rule(game: str, text: str, where: str = "--rule") -> tuple[str, object]:
    """``key=value`` → (key, typed and checked value)."""
    key, eq, value = str(text).partition("=")
    key = key.strip()
    if not eq or not key or not value.strip():
        raise UserError(f"{where} '{text}': write key=value, e.g. {_example_rule(game)}")
    return key, parse_rule_value(game, key, value, f"{where} {key}={value.strip()}")


def _example_rule(game: str) -> str:
    eng = get_game(game).engine_module()
    for key in eng.RULE_FIELDS:
        v = eng.DEFAULT_RULES[key]
        if not isinstance(v, (bool, str)):
            return f"{key}={v}"
    return f"{eng.RULE_FIELDS[0]}=..."


def rule_text(value) -> str:
    """A rule value as ``--rule`` writes it (``true``, ``12``, ``name``)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def with_rules(spec: str, rules: list[str] | tuple[str, ...] | None) -> str:
    """A variant spec with ``--rule key=value`` overrides appended (``force`` and
    ``["capacity=12"]`` → ``force+capacity=12``); a comma-separated list of specs
    gets them on each."""
    rules = [r.strip() for r in rules or () if r.strip()]
    if not rules:
        return spec
    for r in rules:
        if "=" not in r:
            raise UserError(f"--rule '{r}': write key=value (e.g. --rule capacity=12)")
        if "+" in r or "," in r:
            raise UserError(f"--rule '{r}': one key=value per --rule (repeat the option)")
    return ",".join(
        "+".join([item.strip(), *rules]) if item.strip() else item for item in spec.split(",")
    )


def resolve_variant(game: str, spec: str) -> Ruleset:
    """Resolve a rules spec into a full ruleset.

    A spec joins parts with ``+``: ``base``; shipped variants by name or by a
    unique prefix (``configs/<game>/variants/``); TOML files by path (anything
    ending ``.toml`` or holding a ``/``, with a ``[rules]`` table, checked like a
    shipped variant); and ``key=value`` overrides (``--rule``). Variants and
    files may not disagree on a key; an override wins over both. The canonical
    name lists the variants (sorted), then the files (by file name), then the
    overrides (in rule order), so ``momentum+force`` and ``force+momentum`` are
    the same run; a run's identity also holds the resolved rules themselves.
    """
    g = get_game(game)
    allowed = variant_names(game)
    if not spec.strip():
        raise UserError(
            f"empty variant name; allowed: base, {', '.join(allowed)}, a .toml path "
            "or key=value (combine with +)"
        )
    parts = split_list(spec, "rules", "+")
    named: list[str] = []
    bases = 0
    files: list[tuple[str, Path]] = []
    overrides: dict[str, object] = {}
    for part in parts:
        if "=" in part:
            key, value = parse_rule(game, part, "--rule")
            if key in overrides and overrides[key] != value:
                raise UserError(f"rule '{key}' is set twice, to different values, in '{spec}'")
            overrides[key] = value
        elif is_rules_path(part):
            path = readable_file(part, f"variant file '{part}'")
            label = path.name
            if any(label == f for f, _ in files):
                raise UserError(f"variant file '{label}' is named twice in '{spec}'")
            files.append((label, path))
        else:
            # base is a name like the others: 'b' is ambiguous (base, battle-weary)
            name = unique_name(
                part,
                ["base", *allowed],
                f"{game} variant",
                " (or a path to a .toml file, or key=value; combine with +)",
            )
            if name == "base":
                bases += 1
                if bases > 1:
                    raise UserError(f"variant 'base' is named twice in '{spec}'")
                continue
            if name in named:
                raise UserError(f"variant '{name}' is named twice in '{spec}'")
            named.append(name)
    # the base rules are the engine's defaults (its RULES table), overlaid with
    # whatever [rules] base.toml still sets (validated as a partial table)
    over, desc = _load_rules_file(game, g.configs / "base.toml", partial=True)
    eng = g.engine_module()  # here: a misspelt name is refused before numba loads
    rules = {**eng.DEFAULT_RULES, **over}
    set_by: dict[str, str] = {}
    named.sort()
    files.sort()
    descs = [desc]
    sources = [(n, _variant_file(game, n)) for n in named] + files
    for name, path in sources:
        over, vdesc = _load_rules_file(game, path, partial=True)
        if not over:  # it would play base under its own name
            raise UserError(
                f"{path}: a variant file must set at least one rule in its [rules] table "
                f"(balance {game} rules lists the keys)"
            )
        descs.append(vdesc or f"rules from {path}")
        for key, value in over.items():
            if key in set_by and rules[key] != value:
                raise UserError(
                    f"variants '{set_by[key]}' and '{name}' disagree on '{key}'; "
                    "they cannot be combined"
                )
            rules[key] = value
            set_by[key] = name
    ordered = [k for k in eng.RULE_FIELDS if k in overrides]
    for key in ordered:
        rules[key] = overrides[key]
    if ordered:
        descs.append(", ".join(f"{k} = {rule_text(overrides[k])}" for k in ordered))
    labels = named + [f for f, _ in files] + [f"{k}={rule_text(overrides[k])}" for k in ordered]
    canonical = "+".join(labels) if labels else "base"
    check_ruleset(game, canonical, rules)
    return Ruleset(
        game,
        canonical,
        tuple(named + [f for f, _ in files]),
        rules,
        "; ".join(d for d in descs if d),
    )


def check_ruleset(game: str, name: str, rules: dict) -> None:
    """Refuse a whole ruleset the game's engine faults (its optional
    ``check_rules(rules) -> list[str]``): every key may be within its bounds
    while the combination is empty (e.g. a deck of no card). Without the check
    the engine failed with a traceback at the first game.

    Raises
    ------
    UserError
        One line naming the ruleset and every fault.
    """
    check = getattr(get_game(game).engine_module(), "check_rules", None)
    faults = list(check(rules)) if check is not None else []
    if faults:
        raise UserError(f"rules '{name}' cannot be played: {'; '.join(faults)}")


def all_variant_combinations(game: str) -> list[str]:
    """Every combination of the optional variants: base first, then by size."""
    names = variant_names(game)
    out = ["base"]
    for k in range(1, len(names) + 1):
        out += ["+".join(c) for c in itertools.combinations(names, k)]
    return out


def check_combinations(game: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Resolve every combination of the shipped variants: (the valid ones,
    [(combination, why it is refused)])."""
    ok, bad = [], []
    for combo in all_variant_combinations(game):
        try:
            resolve_variant(game, combo)
        except UserError as exc:
            bad.append((combo, str(exc)))
        else:
            ok.append(combo)
    return ok, bad


def parse_variant_list(game: str, text: str) -> list[Ruleset]:
    """A comma-separated list of variants (``all`` = every combination the
    shipped variants allow)."""
    items = split_list(text, "variants") if text.strip() else []
    if items and items[0].split("+")[0].strip().lower() == "all":
        extra = items[0].split("+")[1:]  # 'all' with --rule overrides on each
        if len(items) > 1:
            raise UserError("'all' cannot be listed with other variants")
        items = ["+".join([c, *extra]) for c in check_combinations(game)[0]]
    if not items:
        raise UserError("no variants given; name at least one (e.g. base,force) or 'all'")
    out, seen = [], {}
    for item in items:
        rs = resolve_variant(game, item)
        if rs.name in seen:
            if seen[rs.name] == rs.rules:
                raise UserError(f"variant '{rs.name}' is listed twice")
            raise UserError(
                f"two rule sets are called '{rs.name}' but their rules differ; "
                "give the files different names"
            )
        seen[rs.name] = rs.rules
        out.append(rs)
    return out


# ---- strategies ----------------------------------------------------------------
@dataclass(frozen=True)
class StoredDeck:
    """A deck as a stored run records it (games with decks): its name, its
    Primal's row and its card rows in the set it was played with, and (runs
    stored since decks are bound by name) the Primal's and the cards' names,
    by which :func:`bind_side` looks them up again in the ruleset's set."""

    name: str
    primal: int
    cards: tuple
    primal_name: str | None = None
    names: tuple | None = None  # the cards' names, in deck order


@dataclass(frozen=True)
class Strategy:
    """A named, validated strategy: its TOML table and the kernel's vector."""

    game: str
    name: str
    spec: dict = field(hash=False)
    description: str = ""
    forbidden_ranks: int = 0  # restricted play: bit mask of rank indices
    loadout: int | None = None  # games with loadouts (Clash): index into the engine's LOADOUTS
    # games with decks (card sets): the deck this side plays (a ``Deck`` of the game's card-set module);
    # ``forbidden_ranks`` then masks card rows (restricted play)
    deck: object = None
    n_cards: int = 0  # rows of the card set the deck comes from (games with decks)
    # games with decks: weights per Primal (``[by_primal."<name>"]`` tables of the
    # file), ``("", top-level spec)`` first; :meth:`with_deck` plays the table of
    # the deck's Primal, the top level for a Primal without one
    by_primal: tuple = field(default=(), hash=False)

    def vector(self) -> np.ndarray:
        mod = get_game(self.game).strategy_module()
        side = Side(
            forbidden=self.forbidden_ranks,
            loadout=self.loadout or 0,
            deck=self.deck,
            n_cards=self.n_cards,
        )
        return mod.encode_strategy(self.spec, side)

    def with_loadout(self, index: int) -> Strategy:
        """The same strategy playing loadout ``index`` (named ``strategy@loadout``)."""
        eng = get_game(self.game).engine_module()
        base = self.name.split("@", 1)[0]
        return Strategy(
            self.game,
            f"{base}@{eng.loadout_name(index)}",
            self.spec,
            self.description,
            self.forbidden_ranks,
            index,
        )

    def with_deck(self, deck, n_cards: int) -> Strategy:
        """The same strategy playing ``deck`` (named ``strategy@deck``); ``n_cards``
        is the number of rows of its card set."""
        base = self.name.split("@", 1)[0]
        spec = self.spec
        if self.by_primal:
            table = dict(self.by_primal)
            spec = table.get(deck_primal_name(deck) or "", table[""])
        return replace(self, name=f"{base}@{deck.name}", deck=deck, n_cards=int(n_cards), spec=spec)

    def restricted_card(self, row: int, card_name: str) -> Strategy:
        """The same side forbidden to play card ``row``: drawn, never played."""
        return replace(
            self,
            name=f"{self.name}-no{card_name}",
            forbidden_ranks=self.forbidden_ranks | (1 << int(row)),
        )

    def restricted(self, rank_index: int, rank_name: str) -> Strategy:
        """The same strategy forbidden to play one rank (restricted play)."""
        return Strategy(
            self.game,
            f"{self.name}-no{rank_name}",
            self.spec,
            self.description,
            self.forbidden_ranks | (1 << rank_index),
        )


def deck_primal_name(deck) -> str | None:
    """The name of the Primal that leads ``deck`` (a built deck or a stored one)."""
    name = getattr(deck, "primal_name", None)
    if name:
        return str(name)
    names = getattr(deck, "card_names", ())
    return str(names[int(deck.primal)]) if names else None


def strategy_names(game: str) -> list[str]:
    return get_game(game).strategy_names()


def parse_loadout(game: str, text: str, where: str = "loadout") -> int:
    """A loadout written ``item+item/maneuver`` (e.g. ``Sword+Shield/Armor``, any
    case, items in either order) → its index in the engine's ``ALL_LOADOUTS``
    (those a rule key may allow included: :func:`check_loadout` checks a
    loadout against the rules in force)."""
    eng = get_game(game).engine_module()
    names = [eng.loadout_name(i) for i in range(len(eng.ALL_LOADOUTS))]
    norm = [n.lower().replace(" ", "") for n in names]
    key = str(text).strip().lower().replace(" ", "")
    if "/" in key:
        items, man = key.split("/", 1)
        for cand in (f"{items}/{man}", "+".join(reversed(items.split("+"))) + f"/{man}"):
            if cand in norm:
                return norm.index(cand)
    raise UserError(
        f"{where}: unknown loadout '{text}'; a loadout is item+item/maneuver, one of: "
        f"{', '.join(names)}"
    )


def check_loadout(ruleset: Ruleset, st: Strategy) -> None:
    """Refuse a side whose loadout the ruleset does not allow (e.g. Shield+Spear
    in Clash of Steel without ``allow_shield_spear``): one line, before any run."""
    if st.loadout is None:
        return
    eng = get_game(ruleset.game).engine_module()
    legal = eng.legal_loadouts(ruleset.rules)
    if st.loadout not in legal:
        raise UserError(
            f"{st.name}: loadout {eng.loadout_name(st.loadout)} is not legal under "
            f"the rules '{ruleset.name}' ({eng.LOADOUT_RULE}); "
            f"{len(legal)} loadouts are"
        )


def bind_side(ruleset: Ruleset, st: Strategy) -> Strategy:
    """``st`` as it plays under ``ruleset``: its loadout checked (games with
    loadouts) and its deck (games with decks) looked up by card NAME in the
    ruleset's card set and checked there (every card playable by its Primal,
    one Primal, every card in the set). A side is loaded before the rules are
    known (``strategy@deck`` names a reference deck); this is where the two
    meet, so every run (:class:`balance.runner.RunSpec`) and trace goes through it.

    Raises
    ------
    UserError
        One line naming the side, its deck and the card at fault.
    """
    check_loadout(ruleset, st)
    if st.deck is None or not get_game(ruleset.game).card_sets:
        return st
    cs = ruleset.card_set()
    where = f"{st.name}: deck '{st.deck.name}' under the rules '{ruleset.name}'"
    deck = get_game(ruleset.game).card_set_module().bind_deck(cs, st.deck, where)
    forbidden = st.forbidden_ranks
    if forbidden and deck is not st.deck:  # restricted play masks rows: follow the names
        set_names = getattr(st.deck, "card_names", ())
        if set_names:  # a deck built against a set: every row's name is known
            old = dict(enumerate(set_names))
        elif (deck.primal, tuple(deck.cards)) == (int(st.deck.primal), tuple(st.deck.cards)):
            old = None  # a stored deck whose rows hold: its mask holds too
        else:  # a stored deck on moved rows: the names of its own rows are known
            old = dict(zip(st.deck.cards, getattr(st.deck, "names", None) or (), strict=False))
        if old is not None:
            forbidden = 0
            for r in range(st.forbidden_ranks.bit_length()):
                if st.forbidden_ranks >> r & 1:
                    if old.get(r) not in cs.names:
                        raise UserError(
                            f"{where}: the card it is forbidden to play "
                            f"({old.get(r, f'row {r}')}) is not in the set"
                        )
                    forbidden |= 1 << cs.names.index(old[r])
    if deck is st.deck and st.n_cards == cs.n_cards and forbidden == st.forbidden_ranks:
        return st
    return replace(st, deck=deck, n_cards=cs.n_cards, forbidden_ranks=forbidden)


def _validate_strategy(game: str, path, data: dict) -> dict:
    mod = get_game(game).strategy_module()
    sections = {name: [f[0] for f in feats] for name, (_, feats) in mod.SECTIONS.items()}
    top = ["name", "description", *mod.SCALARS, *sections]
    if hasattr(get_game(game).engine_module(), "LOADOUTS"):
        top.append("loadout")
    if get_game(game).card_sets:
        top += ["deck", "by_primal"]
    check_keys(path, "the top level", data, top)
    spec: dict = {}
    for key, value in data.items():
        if key == "by_primal":  # per-Primal weights (games with decks): checked by primal_specs
            continue
        if key == "description":
            if not isinstance(value, str):
                raise UserError(f"{path}: 'description' must be a string")
            continue
        if key == "deck":  # the deck this strategy plays by default (checked on load)
            if not isinstance(value, str):
                raise UserError(
                    f"{path}: 'deck' must be the name of a deck in configs/{game}/decks.toml"
                )
            continue
        if key == "loadout":  # the loadout this strategy plays by default (checked on load)
            if not isinstance(value, str):
                raise UserError(f"{path}: 'loadout' must be a string like 'sword+shield/armor'")
            continue
        if key == "name":  # display name (used for a strategy loaded by path), not a weight
            if not isinstance(value, str) or not value.strip() or len(value) > 80:
                got = f"{len(value)} characters" if isinstance(value, str) else repr(value)
                raise UserError(
                    f"{path}: 'name' must be a non-empty string of at most 80 characters, got {got}"
                )
            continue
        if key in sections:
            if not isinstance(value, dict):
                raise UserError(f"{path}: '{key}' must be a table of feature weights")
            check_keys(path, f"[{key}]", value, sections[key])
            spec[key] = {k: _number(path, f"{key}.{k}", v) for k, v in value.items()}
        else:
            v = _number(path, key, value)
            if key in ("temperature", "heal_temperature", "prior_weight") and v < 0:
                raise UserError(f"{path}: key '{key}' must be ≥ 0, got {v}")
            spec[key] = v
    if spec.get("prior_weight", 1.0) == 0.0:
        raise UserError(f"{path}: key 'prior_weight' must be > 0")
    return spec


def primal_specs(game: str, path, data: dict, spec: dict) -> tuple:
    """A strategy file's per-Primal weights (games with decks): ``[by_primal."<Primal
    name>"]`` tables, each a whole strategy's weights (sections and scalars) played
    when the side's deck is led by that Primal; ``("", spec)`` (the top level)
    first. A Primal not in the reference card set is refused in one line."""
    table = data.get("by_primal")
    if table is None:
        return ()
    if not isinstance(table, dict) or not table:
        raise UserError(f"{path}: 'by_primal' must hold tables [by_primal.\"<Primal name>\"]")
    cs = get_game(game).card_set("reference")
    primals = [n for i, n in enumerate(cs.names) if cs.type_of(i) == "Primal"]
    out = [("", spec)]
    for name, sub in table.items():
        if name not in primals:
            raise UserError(
                f'{path}: [by_primal."{name}"] names no Primal of the reference set; '
                f"a Primal is one of: {', '.join(primals)}"
            )
        if not isinstance(sub, dict):
            raise UserError(f'{path}: [by_primal."{name}"] must be a table of weights')
        bad = next((k for k in sub if k in ("name", "description", "deck", "by_primal")), None)
        if bad is not None:
            raise UserError(
                f"{path}: [by_primal.\"{name}\"] holds weights only, not '{bad}' "
                "(that key belongs at the top level)"
            )
        out.append((name, _validate_strategy(game, f"{path} [by_primal.{name}]", sub)))
    return tuple(out)


def load_strategy(game: str, name: str) -> Strategy:
    """A strategy by name (``strategies/<game>/<name>.toml``) or by TOML path.

    In a game with decks (Trisk), ``name@deck`` plays the named reference deck;
    without ``@deck`` the strategy's own ``deck`` key, else the first deck of
    ``configs/trisk/decks.toml``. In a game with loadouts (Clash of Steel),
    ``name@Item+Item/Maneuver`` plays that loadout; without it, the strategy's
    own ``loadout`` key. Either way the side's name says what it plays
    (``strategy@deck``, ``strategy@loadout``), so every table names it."""
    g = get_game(game)
    has_loadouts = hasattr(g.engine_module(), "LOADOUTS")
    deck_name = None
    loadout_text = None
    if g.card_sets and "@" in name:
        name, deck_name = (t.strip() for t in name.split("@", 1))
        if not deck_name:
            raise UserError(
                f"'{name}@': no deck named after '@'; name a deck of "
                f"configs/{game}/decks.toml (balance {game} decks), or leave out "
                "'@' for the strategy's own deck"
            )
    elif has_loadouts and "@" in name:
        name, loadout_text = (t.strip() for t in name.split("@", 1))
    if name.endswith(".toml"):
        path = readable_file(name, f"strategy file '{name}'")
        label = path.stem
    else:
        # a name or a unique prefix of one, never a path into the folder
        name = unique_name(
            name, strategy_names(game), f"{game} strategy", " or a path to a .toml file"
        )
        path = get_game(game).strategy_files / f"{name}.toml"
        label = name
    data = load_toml(path)
    spec = _validate_strategy(game, path, data)
    if name.endswith(".toml") and "name" in data:
        label = data["name"]
    st = Strategy(game, label, spec, str(data.get("description", "")), 0)
    if g.card_sets:
        st = replace(st, by_primal=primal_specs(game, path, data, spec))
    if has_loadouts:
        if loadout_text is not None:
            loadout = parse_loadout(game, loadout_text, f"'{name}@{loadout_text}'")
        elif "loadout" in data:
            loadout = parse_loadout(game, data["loadout"], f"{path}: 'loadout'")
        else:
            loadout = 0
        st = st.with_loadout(loadout)
    if g.card_sets:
        st = _with_named_deck(game, st, deck_name or data.get("deck"))
    return st


def reference_deck_names(game: str) -> list[str]:
    """The reference decks of a game with decks, in file order."""
    g = get_game(game)
    return list(g.card_set_module().load_decks(g.card_set("reference")))


def _with_named_deck(game: str, st: Strategy, deck_name: str | None) -> Strategy:
    """``st`` playing the reference deck ``deck_name`` (None: the first one)."""
    g = get_game(game)
    cs = g.card_set("reference")
    decks = g.card_set_module().load_decks(cs)
    if deck_name is None:
        deck = next(iter(decks.values()))
    else:
        deck = decks[unique_name(deck_name, list(decks), f"{game} deck")]
    return st.with_deck(deck, cs.n_cards)


def parse_strategy_list(game: str, text: str) -> list[Strategy]:
    items = split_list(text, "strategies") if text.strip() else []
    if items == ["all"]:
        items = strategy_names(game)
    if len(items) < 1:
        raise UserError(f"no strategies given; allowed: {', '.join(strategy_names(game))}")
    if len(set(items)) != len(items):
        raise UserError("a strategy is listed twice")
    out = [load_strategy(game, s) for s in items]
    names = [s.name for s in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise UserError(
            f"two strategies are named '{dup}' (a file's stem or its 'name' key); "
            "give each a different name"
        )
    return out


def default_field(game: str) -> list[str]:
    """The game's default field: the strategies of ``configs/<game>/study.toml``
    (its scripts and its tuned strategy), or every shipped strategy where a game has
    no study plan. The one place ``compare``, ``sweep``, ``repair``, ``equilibrium
    --from field`` and the study read their field from."""
    if not (get_game(game).configs / "study.toml").is_file():
        return strategy_names(game)
    return [str(s) for s in load_study(game).get("strategies", [])] or strategy_names(game)


def scripted_field(game: str) -> list[str]:
    """The default field without the study's tuned strategy: what ``tune --vs
    field`` tunes against (the tuned strategy is that command's output, so it never
    plays against itself and a re-run reproduces the shipped file)."""
    path = get_game(game).configs / "study.toml"
    tuned = load_study(game).get("tuned") if path.is_file() else None
    return [s for s in default_field(game) if s.partition("@")[0] != tuned]


def load_study(game: str) -> dict:
    """The default study plan of a game (``configs/<game>/study.toml``)."""
    path = get_game(game).configs / "study.toml"
    data = load_toml(path)
    check_keys(
        path,
        "the top level",
        data,
        [
            "variants",
            "strategies",
            "precision",
            "pilot_games",
            "max_games_per_pair",
            "seed",
            "cards_strategy",
            "cards_opponent",
            "cards_games",
            "loadout_strategy",
            "loadout_games",
            "tuned",
            "repair",
            "equilibrium",
            "seconds",
            *get_game(game).study_keys,
        ],
    )
    tuned = data.get("tuned")
    if tuned is not None and (
        not isinstance(tuned, str)
        or tuned not in [str(s).partition("@")[0] for s in data.get("strategies", [])]
    ):
        raise UserError(
            f"{path}: 'tuned' must name one of the study's strategies (the tuned one "
            f"its verdicts are re-checked under), got {tuned!r}"
        )
    return data
