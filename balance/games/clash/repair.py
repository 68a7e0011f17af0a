"""Clash of Steel's repair targets: the loadout choices (``balance clash
repair --target 'max_maneuver_score<=0.60'``; ``docs/repair.md``).

Each candidate rule set plays the loadout matrix (every legal loadout against
every one, seat-swapped, :mod:`balance.loadouts`) with the field's first
strategy on both sides, on the repair's seed; an item pair's or a maneuver's
score is the pooled score of the loadouts that hold it, with its
cluster-robust 95% interval over deals. A target over "every item pair" or
"every maneuver" is a bound on the largest or smallest of them, whose
interval is simultaneous over the pairs (or maneuvers):
:func:`balance.repair.extreme`.
"""

from __future__ import annotations

from balance import loadouts
from balance.repair import GameMetric, Measuring, extremes

KINDS = {"item pair": "item_pair", "maneuver": "maneuver"}


def measure(specs, how: Measuring):
    """Each spec's loadout matrix (the field's first strategy against itself)
    and the extremes of its item-pair and maneuver scores."""
    name = how.first_strategy()
    rows, keys = [], []
    for spec in specs:
        runs = loadouts.run_matrix(
            how.game,
            spec,
            name,
            name,
            how.games,
            how.seed,
            how.threads,
            how.results,
            how.batch_size,
            how.progress,
            how.store_only,
        )
        keys += [r.key for r in runs]
        table = loadouts.pairing_choice_table(how.game, runs)
        row = {"games": int(sum(r.games for r in runs))}
        for kind, label in KINDS.items():
            part = table[table["kind"] == kind]
            items = list(zip(part["score"], part["score_lo"], part["score_hi"], strict=True))
            row |= extremes(f"{label}_score", items, (0.0, 1.0))
        rows.append(row)
    return rows, keys


def repair_metrics() -> dict[str, GameMetric]:
    """The loadout metrics: every item pair's and every maneuver's score
    bounded above and below."""
    out = {}
    for kind, label in KINDS.items():
        for which, word in (("max", "strongest"), ("min", "weakest")):
            out[f"{which}_{label}_score"] = GameMetric(
                0.01,
                "share",
                f"the {word} {kind}'s score in the loadout matrix (the field's first "
                f"strategy on both sides; interval simultaneous over every {kind})",
                measure,
            )
    return out
