"""Trisk's repair targets: every Primal's reference deck (``balance trisk
repair --target 'max_primal_score<=0.55' --target 'min_primal_score>=0.45'``;
``docs/repair.md``).

Each candidate rule set plays the round robin of the reference decks, every
deck played by the field's first strategy (``tempo@<deck>`` for each deck),
on the repair's seed; a Primal's score is its deck's pooled score against
every deck, with the interval clustered by deal
(:func:`balance.tables.strategy_table`). "Every Primal within 45–55%" is a
bound on the largest and the smallest of them, each with an interval
simultaneous over the Primals (:func:`balance.repair.extreme`).
"""

from __future__ import annotations

from balance import config, sweep
from balance.repair import GameMetric, extreme


def deck_field(game: str, strategies: str) -> str:
    """The field's first strategy on every reference deck."""
    names = [t.strip() for t in strategies.split(",") if t.strip()]
    name = config.strategy_names(game)[0] if names == ["all"] else names[0]
    name = name.split("@")[0]
    return ",".join(f"{name}@{d}" for d in config.reference_deck_names(game))


def measure(game, specs, strategies, games, seed, threads, batch_size, results, progress):
    """Each spec's round robin of the reference decks, and the extremes of
    the decks' scores."""
    res = sweep.evaluate(
        game,
        specs,
        deck_field(game, strategies),
        games,
        seed,
        threads,
        batch_size,
        results,
        record_as=None,
        progress=progress,
    )
    st = res["tables"]["strategies"]
    rows = []
    for v, point in zip(res["variants"], res["rows"], strict=True):
        part = st[st["variant"] == v]
        items = list(zip(part["score"], part["score_lo"], part["score_hi"], strict=True))
        rows.append(
            {"games": int(point["games"])}
            | extreme("max_primal_score", items, "max")
            | extreme("min_primal_score", items, "min")
        )
    return rows, [r.key for r in res["runs"].values()]


def repair_metrics() -> dict[str, GameMetric]:
    """The strongest and the weakest Primal."""
    return {
        f"{which}_primal_score": GameMetric(
            0.01,
            "share",
            f"the {word} Primal's score: its reference deck against every reference deck, "
            "all played by the field's first strategy (interval simultaneous over the Primals)",
            measure,
        )
        for which, word in (("max", "strongest"), ("min", "weakest"))
    }
