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
    from balance.paths import STUDY, record_written

    record_written(path, STUDY, "balance study")  # a --page of one command may not replace it
    link = {
        "text": "Task odds (exact and simulated, as the deck runs down), the struggle "
        "policies and what the rules leave open",
        "href": path.name,
    }
    if plan.get("tuned"):
        link["checks"] = policy_checks(struggle, str(plan["tuned"]), threads, results, store_only)
    return [link]


def policy_checks(struggle, tuned: str, threads, results, store_only: bool = False) -> list:
    """The struggle's policy choices (high or low attack, defend or absorb, hand
    or deck damage) re-checked under tuned play: each choice's effect on the
    score against the named policies (the struggle's ``factors``, first rule
    set) beside its effect against the tuned strategy alone, every policy
    playing it on the struggle's deals (seed and games), paired by deal."""
    import numpy as np

    from balance import config, robust, runner
    from balance.fmt import fmt_int, fmt_pp_ci
    from balance.stats import paired_diff
    from balance.store import Store

    plan = struggle.plan
    v = plan.variants[0]
    rs = config.resolve_variant(suits.GAME, v)
    opp = config.load_strategy(suits.GAME, tuned)
    pols = list(plan.policies)
    specs = [
        runner.RunSpec(rs, config.load_strategy(suits.GAME, p), opp, plan.games, plan.seed)
        for p in pols
    ]
    runs = runner.run_many(
        specs,
        store=Store(results),
        threads=threads,
        label=f"suits: {len(specs)} policies against {tuned}",
        store_only=store_only,
    )
    pts = {p: r.pair_points.astype(float) for p, r in zip(pols, runs, strict=True)}
    found = []
    for f in struggle.factors[struggle.factors["variant"] == v].itertuples():
        idx = [name for name, _ in suits.FACTORS].index(f.choice)
        diffs = []
        for p in pols:
            parts = p.split("-")
            if len(parts) != len(suits.FACTORS) or parts[idx] != f.from_level:
                continue
            q = "-".join(parts[:idx] + [f.to_level] + parts[idx + 1 :])
            if q in pts:
                diffs.append(pts[q] - pts[p])
        if not diffs:
            continue
        found.append((f, paired_diff(np.mean(diffs, axis=0) / 4.0), len(diffs)))
    differ = robust.effects_differ(
        [({"mean": f.effect, "lo": f.lo, "hi": f.hi}, d) for f, d, _ in found]
    )
    rows = []
    for (f, d, n_pairs), dif in zip(found, differ, strict=True):
        c1, c2 = robust.call(f.lo, f.hi), robust.call(d["lo"], d["hi"])
        words = robust.CALL_WORDS
        rows.append(
            robust.row(
                v,
                f"policy choice: {f.choice}",
                f"{f.choice} {f.from_level} → {f.to_level} {words[c1]} the score",
                f"{fmt_pp_ci(f.effect, f.lo, f.hi, f.deals)} deals against the named policies",
                f"{fmt_pp_ci(d['mean'], d['lo'], d['hi'], d['n'])} deals against {tuned}",
                robust.effect_status(
                    c1, c2, dif, robust.within(f.lo, f.hi) and robust.within(d["lo"], d["hi"])
                ),
                f"{words[c1]} the score against the named policies; {words[c2]} it against "
                f"{tuned} ({fmt_int(n_pairs)} policy pairs)"
                + (
                    robust.equivalence_words({"lo": f.lo, "hi": f.hi}, d) if c1 == c2 == "0" else ""
                ),
            )
        )
    return rows
