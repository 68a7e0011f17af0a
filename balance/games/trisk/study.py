"""Trisk's page in the default study: the equal-power test of every card, and
its largest card verdicts re-checked under tuned play."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd

from balance import robust
from balance.fmt import fmt_int, fmt_pp_ci
from balance.games.trisk import power as trisk_power
from balance.paths import STUDY, record_written

CHECKED_CARDS = 8  # the cards with the largest effects whose verdicts are re-checked


def pages(
    out: Path, plan: dict, scale: float, threads, results, store_only: bool = False
) -> list[dict]:
    """Run ``balance trisk power`` at ``scale`` × the study plan's ``power_scale``
    of its default plan (through the store; with ``store_only``, every run must
    be there) and write its page next to the study's; the link to it. With the
    plan's ``power_check_strategy`` (the study's tuned strategy), each card's
    effect is measured again under it, and the verdicts of the cards with the
    largest effects come back as the link's ``checks``."""
    if not plan.get("power_scale"):
        return []
    power = trisk_power.load_plan(None).scaled(float(plan["power_scale"]) * scale)
    if plan.get("power_check_strategy"):
        power = replace(power, check_strategy=str(plan["power_check_strategy"]))
    power = trisk_power.check_plan(power, "study")

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    res = trisk_power.run_power(
        power, results=results, threads=threads, progress=True, log=log, store_only=store_only
    )
    path = trisk_power.write_power_page(res, out / "trisk-power.html")
    record_written(path, STUDY, "balance study")
    link = {"text": f"The equal-power test of every card ({res.claim['text']})", "href": path.name}
    tuned = plan.get("tuned")
    if tuned and power.check_strategy and robust.is_tuned(power.check_strategy, tuned):
        link["checks"] = card_checks(res.cards, "+".join(power.strategies), tuned)
    return [link]


_EQUAL = ("equal", "equal within margin")


def _call(verdict: str, direction: str) -> str:
    """A card verdict's call: shown equal (inside ±δ), shown not equal (outside
    it, in a direction), or not shown ("not shown equal", "inconclusive")."""
    if verdict in _EQUAL:
        return "equal"
    if verdict == "not equal":
        return f"not equal ({direction or 'different'})"
    if verdict == "not shown equal":
        return f"not shown equal ({direction or 'different'})"
    return "inconclusive"


def _shown(call: str) -> bool:
    """Whether a call is shown (inside or outside the margin), not left open."""
    return call == "equal" or call.startswith("not equal")


def card_checks(cards: pd.DataFrame, named: str, tuned: str, k: int = CHECKED_CARDS) -> list:
    """Rows of :func:`balance.robust.row` for the ``k`` cards with the largest
    effects under the plan's strategy (``named``), and every card the test
    shows to depend on the strategy: each card's effect and verdict beside the
    same test with the deck played by ``tuned``. The status is "depends on the
    strategy" where the power test shows it (``depends_on_strategy``: the two
    effects differ significantly, or the card is shown inside ±δ under one and
    outside under the other, or outside on opposite sides), "holds" where both
    reach the same shown call (both equal, or both not equal in the same
    direction) and "unclear" otherwise (a call not shown under either)."""
    if cards is None or cards.empty or "effect2" not in cards.columns:
        return []
    order = cards.reindex(cards["effect"].abs().sort_values(ascending=False).index)
    # the largest effects, and every card the power test shows to depend on
    # who plays it
    top = order[order.index.isin(order.head(k).index) | order["depends_on_strategy"].astype(bool)]
    rows = []
    for r in top.itertuples():
        c1 = _call(str(r.verdict), str(getattr(r, "direction", "") or ""))
        d2 = str(getattr(r, "direction2", "") or "")
        if not d2 and str(r.verdict2) in ("not equal", "not shown equal"):
            d2 = "stronger" if r.effect2 > 0 else "weaker"
        c2 = _call(str(r.verdict2), d2)
        why = str(getattr(r, "strategy_why", "") or "")
        if bool(r.depends_on_strategy):
            st = robust.DEPENDS
        elif c1 == c2 and _shown(c1):
            st = robust.HOLDS
        else:
            st = robust.UNCLEAR
        rows.append(
            robust.row(
                "base",
                f"card: {r.card}",
                f"{r.card} is {c1} (under {named})",
                f"{fmt_pp_ci(r.effect, r.lo, r.hi)} n={fmt_int(r.games)} games: {c1}",
                f"{fmt_pp_ci(r.effect2, r.lo2, r.hi2)} n={fmt_int(r.games2)} games under "
                f"{tuned}: {c2}",
                st,
                f"{c1} under {named}; {c2} under {tuned}" + (f" ({why})" if why else ""),
            )
        )
    return rows
