"""The core metrics a target may name and the units they declare.

Kept apart from :mod:`balance.repair`, which reads them for its targets, so
that :mod:`balance.design` can read the same units to rank its problems
(:func:`balance.design.problems`) without an import cycle (repair imports
design). :mod:`balance.repair` re-exports all three names.
"""

from __future__ import annotations

# name: (value column, lo column, hi column, scale of one unit of violation, unit, meaning)
METRICS = {
    "seat_advantage": (
        None,
        None,
        None,
        1.0,
        "points",
        "size of the first seat's advantage: |2 × its share of decided games − 1|, in points",
    ),
    "seat_share": ("seat1_share", "seat1_lo", "seat1_hi", 0.01, "share", "first seat's share"),
    "draws": ("draw_rate", "draw_lo", "draw_hi", 0.01, "share", "share of games drawn"),
    "round_cap": ("cap_share", "cap_lo", "cap_hi", 0.01, "share", "share stopped at the cap"),
    "rounds": ("rounds_mean", "rounds_lo", "rounds_hi", 1.0, "rounds", "mean rounds per game"),
    "nash_support": (
        "nash_support",
        None,
        None,
        1.0,
        "strategies",
        "strategies in the max-entropy Nash mixture",
    ),
    "max_strategy_score": (
        "best_score",
        "best_sim_lo",
        "best_sim_hi",
        0.01,
        "share",
        "the best strategy's score against the field (interval simultaneous over the field)",
    ),
    "min_strategy_score": (
        "worst_score",
        "worst_sim_lo",
        "worst_sim_hi",
        0.01,
        "share",
        "the worst strategy's score against the field (interval simultaneous over the field)",
    ),
    "lead_changes": (
        "lead_changes",
        "lead_changes_lo",
        "lead_changes_hi",
        0.1,
        "per game",
        "lead changes per game",
    ),
    "comebacks": (
        "comeback_share",
        "comeback_lo",
        "comeback_hi",
        0.01,
        "share",
        "share of decided games won by the side that trailed",
    ),
}
#: Every unit a metric may declare (:data:`METRICS`, a game's
#: :class:`GameMetric`): what one value of it is. A target on a unit of
#: :data:`PERCENT_UNITS` may be written as a percent ("65%" is 0.65), and a
#: plain number above 1 there is refused as a percent written without its
#: sign ("65": write 0.65 or 65%); on any other unit "%" is refused.
UNITS = {
    "share": "a share, 0 to 1",
    "score points": "a difference of two scores, -1 to 1",
    "points": "points of a share, 0 to 100",
    "rounds": "rounds per game",
    "per game": "a count per game",
    "strategies": "a number of strategies",
}
PERCENT_UNITS = ("share", "score points")
