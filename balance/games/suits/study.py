"""The four-suits RPG's page in the default study: Task odds and the struggle
policies."""

from __future__ import annotations

from pathlib import Path

from balance.games.suits import analysis as suits


def pages(
    out: Path, plan: dict, scale: float, threads, results, store_only: bool = False
) -> list[dict]:
    """The analysis page (``balance suits tasks`` and ``struggle`` at ``scale``
    of the study plan's counts), next to the study's; the link to it. With
    ``store_only`` everything comes from the store."""
    if not plan.get("tasks_hands"):
        return []
    seed = int(plan["seed"])
    tasks = suits.run_tasks(
        suits.TasksPlan(
            hands=int(plan["tasks_hands"]), characters=int(plan["tasks_characters"]), seed=seed
        ).scaled(scale),
        threads=threads,
        results=results,
        store_only=store_only,
        progress=True,
    )
    struggle = suits.run_struggle(
        suits.StrugglePlan(games=int(plan["struggle_games"]), seed=seed).scaled(scale),
        threads=threads,
        results=results,
        store_only=store_only,
    )
    path = suits.write_page(tasks, struggle, out / "suits-analysis.html")
    return [
        {
            "text": "Task odds (exact and simulated, as the deck runs down), the struggle "
            "policies and what the rules leave open",
            "href": path.name,
        }
    ]
