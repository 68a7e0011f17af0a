"""Trisk's page in the default study: the equal-power test of every card."""

from __future__ import annotations

import sys
from pathlib import Path

from balance.games.trisk import power as trisk_power


def pages(
    out: Path, plan: dict, scale: float, threads, results, store_only: bool = False
) -> list[dict]:
    """Run ``balance trisk power`` at ``scale`` × the study plan's ``power_scale``
    of its default plan (through the store; with ``store_only``, every run must
    be there) and write its page next to the study's; the link to it."""
    if not plan.get("power_scale"):
        return []
    power = trisk_power.check_plan(
        trisk_power.load_plan(None).scaled(float(plan["power_scale"]) * scale), "study"
    )

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    res = trisk_power.run_power(
        power, results=results, threads=threads, progress=True, log=log, store_only=store_only
    )
    path = trisk_power.write_power_page(res, out / "trisk-power.html")
    return [
        {"text": f"The equal-power test of every card ({res.claim['text']})", "href": path.name}
    ]
