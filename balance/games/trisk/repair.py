"""Trisk's part of a repair (``docs/repair.md``): its targets and its moves.

**Targets:** every Primal's reference deck (``--target 'max_primal_score<=0.55'
--target 'min_primal_score>=0.45'``). Each candidate plays the round robin of
the reference decks, every deck played by the field's first strategy
(``tempo@<deck>`` for each deck), on the repair's seed; a Primal's score is
its deck's pooled score against every other deck, with the interval
clustered by deal (:func:`balance.tables.strategy_table`). "Every Primal
within 45–55%" bounds the largest and the smallest of them, each with an
interval simultaneous over the Primals (:func:`balance.repair.extreme`).

**Moves:** card fields and Skill Book amounts (``--move 'card:Bear.hp=5..9'``,
``card:Meru.wis=7..9`` for a Primal's code, ``card:Bear.Hibernate=2..4`` for an
ability's level, ``skill:Dread.n=1..3``). The fields a move may change on a
card are those play reads for its type (``sims.trisk.cards.READ_FIELDS``): a
field the engine ignores is never a move. A candidate plays a card set derived
from the rules' own (every comment and line kept, by tomlkit), written once
under the hash of its text into the repair's folder of the store and loaded
like any designer's set (a change that breaks the set is refused in one
line); a verified candidate's set is copied beside its variant file.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import tomlkit

from balance import config, sweep
from balance.errors import UserError
from balance.games.trisk import cards
from balance.repair import GameMetric, GameMoves, Measuring, Move, extremes
from balance.store import write_text_atomic
from sims.trisk import cards as C


def deck_field(how: Measuring) -> str:
    """The field's first strategy on every reference deck."""
    name = how.first_strategy()
    return ",".join(f"{name}@{d}" for d in config.reference_deck_names(how.game))


def measure(specs, how: Measuring):
    """Each spec's round robin of the reference decks, and the extremes of
    the decks' scores."""
    res = how.evaluate(specs, deck_field(how))
    st = res["tables"]["strategies"]
    rows = []
    for v, point in zip(res["variants"], res["rows"], strict=True):
        part = st[st["variant"] == v]
        items = list(zip(part["score"], part["score_lo"], part["score_hi"], strict=True))
        rows.append({"games": int(point["games"])} | extremes("primal_score", items, (0.0, 1.0)))
    return rows, [r.key for r in res["runs"].values()]


# the card groups a card-effect target may name: metric word -> card types
GROUPS = {
    "card": ("Creation", "Upgrade", "Sorcery"),
    "creation": ("Creation",),
    "upgrade": ("Upgrade",),
    "sorcery": ("Sorcery",),
}


def measure_cards(specs, how: Measuring):
    """Each spec's swap-in effect of every card of the groups ``how.wanted``
    names (the equal-power test's first look,
    :func:`balance.games.trisk.power.card_effects`: ``copies`` neutral cards of
    each Primal's reference deck swapped for the card, against every reference
    deck, all played by the field's first strategy, at ``how.games`` games a
    run), and the extremes of each group."""
    from balance.games.trisk import power

    wanted = how.wanted
    groups = [g for g in GROUPS if f"max_{g}_effect" in wanted or f"min_{g}_effect" in wanted]
    first = how.first_strategy()
    rows, keys = [], []
    for spec in specs:
        cs = config.resolve_variant(how.game, spec).card_set()
        types = {t for g in groups for t in GROUPS[g]}
        names = [c["name"] for c in cs.cards if c["type"] in types]
        plan = replace(
            power.load_plan(),
            variant=spec,
            seed=how.seed,
            games=how.games,
            max_games=how.games,
            strategies=(first,),
            field=(first,),
            cards=tuple(names),
            check_strategy=None,
            calibration_games=0,
        )
        table, k = power.card_effects(
            plan,
            results=how.results,
            threads=how.threads,
            progress=how.progress,
            store_only=how.store_only,
        )
        keys += k
        kind = {c["name"]: c["type"] for c in cs.cards}
        row = {"games": int(table["games"].sum())}
        for g in groups:
            part = table[table["card"].map(kind).isin(GROUPS[g])]
            items = list(zip(part["effect"], part["lo"], part["hi"], strict=True))
            row |= extremes(f"{g}_effect", items, (-1.0, 1.0))
        rows.append(row)
    return rows, keys


def repair_metrics() -> dict[str, GameMetric]:
    """The strongest and the weakest Primal; the largest and smallest card
    effect, over every card or one type."""
    out = {
        f"{which}_primal_score": GameMetric(
            0.01,
            "share",
            f"the {word} Primal's score: its reference deck against every reference deck, "
            "all played by the field's first strategy (interval simultaneous over the Primals)",
            measure,
        )
        for which, word in (("max", "strongest"), ("min", "weakest"))
    }
    for g, types in GROUPS.items():
        for which, word in (("max", "largest"), ("min", "smallest")):
            out[f"{which}_{g}_effect"] = GameMetric(
                0.01,
                "score points",
                f"the {word} swap-in effect of a {'/'.join(types)} card, in points of score "
                "(the equal-power test's first look under the field's first strategy; "
                "interval simultaneous over the cards)",
                measure_cards,
            )
    return out


# --------------------------------------------------------------------------- card moves
# The card fields a move may change, by card type: the numeric fields play reads
# for that type (sims.trisk.cards.READ_FIELDS), so a field the engine ignores (a
# Primal's attack) is never a move; an ability's level moves only on a type
# whose abilities are read.
MOVABLE_FIELDS = {
    ctype: tuple(f for f in fields if f in cards.RANGES and f not in ("id", "level", "n"))
    for ctype, fields in C.READ_FIELDS.items()
}
MOVES_ABILITIES = {ctype: "abilities" in fields for ctype, fields in C.READ_FIELDS.items()}
CARD_FIELDS = tuple(dict.fromkeys(f for fields in MOVABLE_FIELDS.values() for f in fields))
SYNTAX = (
    "card:NAME.FIELD=LO..HI (FIELD: a Creation's or Upgrade's "
    + ", ".join(MOVABLE_FIELDS["Creation"])
    + " or one of its abilities for its level; a Primal's "
    + ", ".join(MOVABLE_FIELDS["Primal"])
    + ") or skill:NAME.n=LO..HI"
)


def _fields_text(ctype: str) -> str:
    """What a move may change on a card of ``ctype``, for a message."""
    fields = ", ".join(MOVABLE_FIELDS.get(ctype, ())) or "none"
    abilities = MOVES_ABILITIES.get(ctype, False)
    return fields + (", or one of its abilities (its level)" if abilities else "")


def _set_path(base_rules: dict) -> Path:
    name = str(base_rules.get("card_set", "reference"))
    return cards.REFERENCE_SET if name == "reference" else Path(name)


def parse_move(game: str, text: str, base_rules: dict) -> Move | None:
    """``card:NAME.FIELD=values`` (a card's stat, its Attack's unlock level, a
    Primal's code mig/cun/wis, or an ability's level by the ability's name) or
    ``skill:NAME.n=values`` (a Skill Book entry's amount); None for any other
    text (a rules key). Names accept a unique prefix; values are integers
    within the card set's bounds (the derived set is checked again whole)."""
    key, eq, spec = str(text).partition("=")
    key = key.strip()
    if not key.startswith(("card:", "skill:")):
        return None
    where = f"--move {text}"
    kind, _, body = key.partition(":")
    name, dot, fld = body.rpartition(".")
    if not eq or not dot or not name.strip() or not fld.strip() or not spec.strip():
        raise UserError(f"{where}: write {SYNTAX}")
    name, fld = name.strip(), fld.strip()
    doc = cards._load_toml(_set_path(base_rules))
    if kind == "skill":
        skills = doc.get("skills", {})
        name = config.unique_name(name, list(skills), "skill", " in the card set's Skill Book")
        if fld != "n":
            raise UserError(f"{where}: a skill's movable field is n (its amount), got '{fld}'")
        base = skills[name].get("n", 1)
        if not isinstance(base, int):
            raise UserError(f"{where}: skill '{name}' has n = {base!r}; only a number can move")
        bounds = cards.RANGES["n"]
    else:
        by_name = {c["name"]: c for c in doc.get("card", [])}
        name = config.unique_name(name, list(by_name), "card", " in the card set")
        card = by_name[name]
        ctype = str(card.get("type", ""))
        movable = MOVABLE_FIELDS.get(ctype, ())  # an unknown type: the loader refuses it
        if fld in CARD_FIELDS and fld not in movable:
            raise UserError(
                f"{where}: play never reads '{fld}' on a {ctype} (card '{name}'); a "
                f"{ctype}'s moves: {_fields_text(ctype)}"
            )
        if fld in movable:
            if fld not in card:
                raise UserError(f"{where}: card '{name}' has no field '{fld}'")
            base, bounds = card[fld], cards.RANGES[fld]
        else:
            abilities = {a["skill"]: a for a in card.get("abilities", [])}
            if not abilities or not MOVES_ABILITIES.get(ctype, False):
                raise UserError(
                    f"{where}: '{fld}' is not a field of card '{name}'; a {ctype}'s "
                    f"moves: {_fields_text(ctype)}"
                )
            fld = config.unique_name(
                fld,
                list(abilities),
                f"field or ability of card '{name}'",
                f" (or a field: {', '.join(movable)})",
            )
            base, bounds = abilities[fld]["level"], cards.RANGES["level"]
    raw = sweep.value_texts(spec.strip(), where)
    try:
        values = tuple(int(v) for v in raw)
    except ValueError:
        raise UserError(f"{where}: a card field takes integers, got '{spec.strip()}'") from None
    lo, hi = bounds
    bad = [v for v in values if not lo <= v <= hi]
    if bad:
        raise UserError(f"{where}: {bad[0]} is out of range; allowed {lo}..{hi}")
    return Move(f"{kind}:{name}.{fld}", sweep.distinct_values(values, where), base, game=True)


def derived_text(base_rules: dict, changes: dict) -> str:
    """The card set of ``base_rules`` with ``changes`` ({move key: value})
    made, as TOML text keeping every comment and line of the original
    (tomlkit), its description saying what changed."""
    path = _set_path(base_rules)
    doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    for key in sorted(changes):
        value = int(changes[key])
        kind, _, body = key.partition(":")
        name, _, fld = body.rpartition(".")
        if kind == "skill":
            doc["skills"][name]["n"] = value
            continue
        card = next(c for c in doc["card"] if c["name"] == name)
        if fld in CARD_FIELDS:
            card[fld] = value
        else:
            next(a for a in card["abilities"] if a["skill"] == fld)["level"] = value
    what = ", ".join(f"{k}={int(v)}" for k, v in sorted(changes.items()))
    doc["description"] = f"{doc.get('description', '')} Repair candidate: {what}.".strip()
    return tomlkit.dumps(doc)


def apply(game: str, base_rules: dict, changes: dict, folder: Path) -> list[str]:
    """The rule override that plays ``changes``: ``card_set=`` a derived set,
    written once into ``folder`` under the hash of its text and checked."""
    text = derived_text(base_rules, changes)
    path = Path(folder) / f"cards-{hashlib.sha256(text.encode()).hexdigest()[:16]}.toml"
    if not path.is_file():
        write_text_atomic(path, text)
    cards.load_card_set(path, base_rules)  # a set the changes broke: one line naming it
    return [f"card_set={path}"]


def export(game: str, rules: dict, stem: Path) -> dict:
    """A candidate's derived card set copied beside its variant file
    (``<stem>-cards.toml``): the rules key to write."""
    src = Path(str(rules.get("card_set", "reference")))
    if str(src) == "reference" or not src.is_file():
        return {}
    dest = Path(f"{stem}-cards.toml")
    write_text_atomic(dest, src.read_text(encoding="utf-8"))
    return {"card_set": str(dest)}


def repair_moves() -> GameMoves:
    """Trisk's card fields and Skill Book amounts as repair moves."""
    return GameMoves(SYNTAX, parse_move, apply, export)
