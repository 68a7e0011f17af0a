"""Analyses shared by the command line and the study: library functions that
run (or read from the store) the simulations behind each command and return
tables. The CLI only parses options and prints what these return."""

from __future__ import annotations

from balance import config, experiments, runner, stats, tables
from balance.errors import UserError
from balance.stats import wilson
from balance.store import Store
from balance.versus import base_index  # noqa: F401 (compare's base: one rule, in balance.versus)


def simulate_command(
    game: str,
    variant: str,
    a: str,
    b: str,
    n: int,
    seed: int,
    threads,
    per_game: bool,
    batch_size: int,
    results,
    as_json: bool,
    precision: float | None = None,
    max_games: int = 1_000_000,
) -> dict:
    """Library body of ``balance <game> simulate`` (returns the printed data).

    With ``precision``, ``n`` is a pilot and the run is extended until both
    sides' deal-level win-rate CIs are within ±``precision`` (or ``max_games``)."""
    import time

    n = runner.check_games(n)
    if precision is not None:  # every option is checked before the first game
        max_games = check_precision(precision, max_games, n)
    rs = config.resolve_variant(game, variant)
    sa, sb = config.load_strategy(game, a), config.load_strategy(game, b)
    spec = runner.RunSpec(rs, sa, sb, n, seed, per_game)
    plan = {
        "variant": experiments.ruleset_plan(rs),
        "a": experiments.strategy_plan(sa),
        "b": experiments.strategy_plan(sb),
        "n": n,
        "seed": seed,
        "per_game": per_game,
        **({"precision": precision, "max_games": max_games} if precision is not None else {}),
    }

    store = Store(results)
    t0 = time.perf_counter()
    res = runner.run_many([spec], store=store, threads=threads, batch_size=batch_size)[0]
    if precision is not None:
        res = refine_to_precision(
            [spec],
            [res],
            precision,
            max_games,
            lambda todo, extend=None: runner.run_many(
                todo, store=store, threads=threads, batch_size=batch_size, extend=extend
            ),
        )[0]
        spec = res.spec
        n = res.games
    experiments.record(results, game, "simulate", plan, [res.key])
    elapsed = time.perf_counter() - t0
    row = tables.run_row(res)
    row.update(
        {
            "cached": res.cached,
            "elapsed_s": round(elapsed, 3),
            "store": str(store.path(game, spec.key)),
        }
    )
    if not res.cached:
        row["games_per_s"] = round(n / max(elapsed, 1e-9))
    return row


def check_precision(precision: float, max_games: int, n: int | None = None) -> int:
    """Validate --precision and --max-games (not below the pilot ``n``, -n);
    returns --max-games as whole deal pairs."""

    if not 0 < precision < 0.5:
        raise UserError(
            f"--precision must be between 0 and 0.5 (e.g. 0.01 for ±1 point), got {precision}"
        )
    if max_games < 2:
        raise UserError(f"--max-games must be at least 2, got {max_games}")
    max_games = runner.check_games(max_games, "--max-games")
    if n is not None and max_games < n:
        raise UserError(
            f"--max-games ({max_games:,}) is below -n ({n:,}), the pilot every match plays "
            "first; give --max-games at least -n"
        )
    return max_games


def needed_games(wins, games, precision: float, deff=1.0):
    """Games for a win rate's 95% CI to be at most ±``precision`` (vectorised).

    ``deff`` is the rate's design effect (:func:`balance.stats.deal_wilson`:
    the deal-level variance over that of independent games; 1 + the
    correlation of a deal's two games), so the target holds for the
    deal-level interval the tables print. Uses the normal-approximation size
    ``z²·p(1−p)·deff / precision²`` at the point of the current interval
    nearest ½ (its conservative end); the Wilson interval on that many
    effective games is never wider.
    """
    import numpy as np

    deff = np.asarray(deff, dtype=float)
    wins, games = np.broadcast_arrays(np.asarray(wins, dtype=float), np.asarray(games, dtype=float))
    lo, hi = wilson(wins / deff, games / deff)
    p = np.clip(0.5, lo, hi)  # the point of [lo, hi] nearest ½
    z = 1.959963984540054
    return np.ceil(z * z * p * (1 - p) * deff / precision**2).astype(np.int64)


def win_rate_deffs(res) -> list[float]:
    """Design effects of a run's two win rates (A's, B's), from its deals."""

    deals = stats.deal_outcomes(stats.pentanomial_counts(res.pair_points), res.draws)
    return [stats.deal_wilson(deals["a_wins"])["deff"], stats.deal_wilson(deals["b_wins"])["deff"]]


def refine_to_precision(specs: list, res: list, precision: float, max_games: int, run) -> list:
    """Re-run every spec whose win-rate CIs (both sides) are wider than
    ±``precision`` with the games they need (at most ``max_games``), until all
    are within it; ``run(specs, extend)`` plays a list of specs, continuing
    the smaller runs given in ``extend``: game i of a seed is the same game at
    any run size, so a larger run extends a smaller one. The CIs are the
    deal-level ones (:func:`needed_games` with each run's design effect,
    estimated again after every extension)."""
    from dataclasses import replace

    import numpy as np

    for _ in range(4):
        wins = np.array([[r.a_wins, r.b_wins] for r in res])
        games = np.array([r.games for r in res])
        deff = np.array([win_rate_deffs(r) for r in res], dtype=float)
        need = needed_games(wins, games[:, None], precision, deff).max(axis=1)
        need = np.minimum(max_games, (need * 1.02).astype(np.int64) + 2)
        need += need % 2
        todo, prev = [], {}
        for i, (spec, r) in enumerate(zip(specs, res, strict=False)):
            if need[i] > r.games:
                prev[len(todo)] = r
                todo.append(i)
                specs[i] = replace(spec, n_games=int(need[i]))
        if not todo:
            break
        for i, r in zip(todo, run([specs[i] for i in todo], prev), strict=False):
            res[i] = r
    return res


def compare_command(
    game: str,
    variants: str,
    strategies: str,
    n: int,
    seed: int,
    threads,
    batch_size: int,
    results,
    precision: float | None = None,
    max_games: int = 1_000_000,
    store_only: bool = False,
    with_tables: bool = True,
    reference: bool = True,
    record_as: str | None = "compare",
    progress: bool = True,
) -> tuple[dict, list, list, dict]:
    """Run (or read) the round robin of ``strategies`` under every variant.

    With ``precision``, ``n`` is the pilot size of every match and matches are
    extended until each side's win-rate CI is within ±``precision`` (or
    ``max_games`` is reached). Returns (tables, variant names, strategy names,
    run results by key). With ``reference`` (the default), base is played too
    when it is not listed: each variant's difference is measured against it.
    The experiment is recorded in the store under the command name
    ``record_as`` (None: the caller records its own, e.g. a study).
    """
    from itertools import combinations

    n = runner.check_games(n)
    runner.check_seed(seed)
    if precision is not None:  # every option is checked before the first game
        max_games = check_precision(precision, max_games, n)
    rulesets = config.parse_variant_list(game, variants)
    if reference and "base" not in [r.name for r in rulesets]:
        rulesets.insert(0, config.resolve_variant(game, "base"))  # differences need base
    strats = config.parse_strategy_list(game, strategies)
    if len(strats) < 2:
        raise UserError("--strategies needs at least two strategies for a round robin")
    by_name = {s.name: s for s in strats}
    specs, keys = [], []
    for rs in rulesets:
        # a strategy against itself scores ½ exactly under duplicate seating
        for a, b in combinations([s.name for s in strats], 2):
            specs.append(runner.RunSpec(rs, by_name[a], by_name[b], n, seed))
            keys.append((rs.name, a, b))

    def run(todo, extend=None):
        return runner.run_many(
            todo,
            store=Store(results),
            threads=threads,
            batch_size=batch_size,
            label=f"{game}: {len(todo)} matches",
            extend=extend,
            store_only=store_only,
            progress=progress,
        )

    res = run(specs)
    if precision is not None:
        res = refine_to_precision(specs, res, precision, max_games, run)

    if record_as and not store_only:
        plan = {
            "variants": [experiments.ruleset_plan(r) for r in rulesets],
            "strategies": [experiments.strategy_plan(s) for s in strats],
            "n": n,
            "seed": seed,
            **({"precision": precision, "max_games": max_games} if precision is not None else {}),
        }
        experiments.record(results, game, record_as, plan, [r.key for r in res])
    runs = dict(zip(keys, res, strict=False))
    vnames = [r.name for r in rulesets]
    snames = [s.name for s in strats]
    t = tables.compare_tables(runs, vnames, snames) if with_tables else {}
    return t, vnames, snames, runs


def cards_runs(
    game: str,
    variant: str,
    strategy: str,
    vs: str,
    n: int,
    seed: int,
    threads,
    batch_size: int,
    results,
    restricted: bool = True,
    store_only: bool = False,
    record_as: str | None = "cards",
) -> tuple[list, list]:
    """The card-value runs: the standard run, then one per forbidden rank
    (recorded as the experiment ``record_as``; None: the caller records it)."""

    n = runner.check_games(n)
    runner.check_seed(seed)
    rs = config.resolve_variant(game, variant)
    s, o = config.load_strategy(game, strategy), config.load_strategy(game, vs)
    eng = config.get_game(game).engine_module()
    specs = [runner.RunSpec(rs, s, o, n, seed)]
    ranks = list(eng.RANK_NAMES) if restricted else []
    specs += [runner.RunSpec(rs, s.restricted(i, r), o, n, seed) for i, r in enumerate(ranks)]
    res = runner.run_many(
        specs,
        store=Store(results),
        threads=threads,
        batch_size=batch_size,
        label=f"{game}: card value",
        store_only=store_only,
    )
    if record_as and not store_only:
        plan = {
            "variant": experiments.ruleset_plan(rs),
            "strategy": experiments.strategy_plan(s),
            "vs": experiments.strategy_plan(o),
            "n": n,
            "seed": seed,
            "restricted": restricted,
        }
        experiments.record(results, game, record_as, plan, [r.key for r in res])
    return res, ranks


def cards_command(
    game: str,
    variant: str,
    strategy: str,
    vs: str,
    n: int,
    seed: int,
    threads,
    batch_size: int,
    results,
    restricted: bool = True,
) -> dict:
    """Card value tables: observational (by card, rank, suit) and restricted play."""
    res, ranks = cards_runs(
        game, variant, strategy, vs, n, seed, threads, batch_size, results, restricted
    )

    out = {
        "by_card": tables.card_table(res[0], "card"),
        "by_rank": tables.card_table(res[0], "rank"),
        "by_suit": tables.card_table(res[0], "suit"),
    }
    if restricted:
        out["restricted"] = tables.restricted_table(res[0], dict(zip(ranks, res[1:], strict=False)))
    return out


def sprt_command(
    game: str,
    variant: str,
    vs: str,
    strategy: str,
    opponents: str | None,
    delta: float,
    alpha: float,
    beta: float,
    batch: int,
    max_games: int,
    seed: int,
    threads,
    results,
):
    """``balance <game> sprt``: does variant ``vs`` change ``strategy``'s score
    (against ``opponents``) by at least ``delta`` points, compared with
    ``variant``? Plays seat-swapped deal pairs on the same seeds under both
    rule sets in batches and yields the sequential test after each batch
    (a dict from :func:`balance.stats.sprt_pair_diff`, plus ``games``),
    stopping as soon as the log-likelihood ratio crosses a bound or
    ``max_games`` per rule set is reached. The final runs go to the store.
    """
    import numpy as np

    if not 0 < delta < 50:
        raise UserError(f"--delta must be between 0 and 50 points of win rate, got {delta}")
    for name, v in (("--alpha", alpha), ("--beta", beta)):
        if not 0 < v < 0.5:
            raise UserError(f"{name} must be between 0 and 0.5, got {v}")
    if batch <= 0:
        raise UserError(f"--batch must be a positive number of deal pairs, got {batch}")
    runner.check_seed(seed)
    max_games = runner.check_games(max_games, "--max-games")
    if 2 * batch > max_games:  # one step would already play past the stop
        raise UserError(
            f"--batch ({batch:,} deal pairs = {2 * batch:,} games a step) is more than "
            f"--max-games ({max_games:,}); give a smaller --batch"
        )
    ra, rb = config.resolve_variant(game, variant), config.resolve_variant(game, vs)
    if ra.name == rb.name:
        raise UserError(
            f"--variant and --vs are the same rules ('{ra.name}'); name two different ones"
        )
    s = config.load_strategy(game, strategy)
    if opponents is None:
        names = [x for x in config.load_study(game)["strategies"] if x != s.name]
    else:
        names = [x.strip() for x in opponents.split(",") if x.strip()]
        if not names:
            raise UserError("--opponents names no strategy")
    opps = [config.load_strategy(game, o) for o in names]
    for rs in (ra, rb):  # every side is checked under both rule sets before the first game
        for o in opps:
            runner.RunSpec(rs, s, o, 2, seed)
    threads = runner.set_threads(threads)
    per_step = 2 * batch * len(opps)  # games per rule set per step
    cur: dict = {}
    n_opp = 0
    cap = max(2, (max_games // len(opps)) // 2 * 2)  # games per opponent per rule set
    while True:
        n_opp = min(n_opp + 2 * batch, cap)
        pts = {ra.name: [], rb.name: []}
        pairs = [(rs, o) for rs in (ra, rb) for o in opps]
        done = runner.simulate_runs(  # every match of a step at once
            [runner.RunSpec(rs, s, o, n_opp, seed) for rs, o in pairs],
            extend={
                i: cur[(r.name, o.name)]
                for i, (r, o) in enumerate(pairs)
                if (r.name, o.name) in cur
            },
        )
        for (rs, o), res in zip(pairs, done, strict=True):
            cur[(rs.name, o.name)] = res
            pts[rs.name].append(res.pair_points)
        counts = stats.pair_diff_counts(np.concatenate(pts[ra.name]), np.concatenate(pts[rb.name]))
        out = stats.sprt_pair_diff(counts, delta / 100.0, alpha, beta)
        out["games"] = n_opp * len(opps)
        out["games_per_step"] = per_step
        done = out["decision"] != "continue" or n_opp >= cap
        if done:
            store = Store(results)
            for res in cur.values():
                res.manifest = runner.run_manifest(res.spec, 0.0, threads)
                runner.save_run(store, res)
            plan = {
                "variant": experiments.ruleset_plan(ra),
                "vs": experiments.ruleset_plan(rb),
                "strategy": experiments.strategy_plan(s),
                "opponents": [experiments.strategy_plan(o) for o in opps],
                "delta": delta,
                "alpha": alpha,
                "beta": beta,
                "batch": batch,
                "max_games": max_games,
                "seed": seed,
            }
            experiments.record(results, game, "sprt", plan, [r.key for r in cur.values()])
            out["final"] = True
            out["store"] = str(store.root / game)
            out["runs"] = len(cur)
            out["opponents"] = [o.name for o in opps]
            out["variant"], out["vs"], out["strategy"] = ra.name, rb.name, s.name
            yield out
            return
        yield out


# ---- compare --field equilibrium --------------------------------------------------------
FIELDS = ("scripts", "equilibrium")


def check_field(field: str) -> str:
    """``compare``'s ``--field``: one of :data:`FIELDS` (a one-line UserError else)."""
    value = str(field).strip().lower()
    if value not in FIELDS:
        raise UserError(f"--field must be one of {', '.join(FIELDS)}; got '{field}'")
    return value


def equilibrium_start(game: str) -> list:
    """Where each ruleset's equilibrium search starts: the game's study field
    (``configs/<game>/study.toml``'s ``strategies``) and the members of its
    shipped base-rules population, when there is one (a member whose name the
    field already has is left out). A warm start: a ruleset near base begins
    near its equilibrium."""
    from balance import equilibrium as eqm

    shipped = (eqm.default_folder(game) / eqm.POPULATION).is_file()
    return eqm.start_population(game, "field,shipped" if shipped else "field")


def equilibrium_rows(base: dict, other: dict, thresholds: dict) -> list[dict]:
    """Each property of ``other``'s equilibrium against ``base``'s
    (:func:`balance.equilibrium.summary` dicts), as rows of
    :func:`balance.versus.versus_base`: the two equilibria are independent
    searches, so the difference's SE is ``sqrt(se_a² + se_b²)``; the support's
    and the effective number's SE come from their bootstrap ranges."""
    from balance import versus

    t = thresholds
    rows = []

    def figure(s: dict, key: str) -> dict:
        if key in ("support", "effective"):
            x = dict(s[key])
            x["n"] = int(s["settings"]["games"]) // 2  # deals of each pairing of the matrix
            x["unit"] = "deals (bootstrap)"
            return x
        if key == "exploitability":  # its SE can be 0 (all drawn): its interval never is
            return {**{k: v for k, v in s[key].items() if k != "se"}, "unit": "deals"}
        x = dict(s["play"][key])
        x["n"] = x.get("clusters")
        x["unit"] = "deals"
        return x

    spec = (
        (
            "seat_fairness",
            "seat fairness",
            "seat_share",
            (t["seat_share_min"], t["seat_share_max"]),
        ),
        ("length", "game length", "rounds", (t["rounds_min"], t["rounds_max"])),
        ("draws", "draws", "draws", (None, t["draw_rate_max"])),
        ("round_cap", "round-cap share", "round_cap", (None, t["round_cap_max"])),
        ("support", "support size", "support", (t["nash_support_min"], None)),
        ("effective", "effective strategies", "effective", None),
    )
    for prop, label, key, target in spec:
        b, o = figure(base, key), figure(other, key)
        r = versus.versus_base(prop, b, o, target)
        rows.append({**r, "label": label, "unit": b["unit"], "judged": target is not None})
    r = versus.versus_status(
        "dominant", base["dominant"]["status"], other["dominant"]["status"], "no"
    )
    rows.append({**r, "label": "single-strategy equilibrium", "judged": True})
    b, o = figure(base, "exploitability"), figure(other, "exploitability")
    r = versus.versus_base("exploitability", b, o, None)
    rows.append({**r, "label": "exploitability reached", "unit": "deals", "judged": False})
    return rows


def compare_equilibrium_command(
    game: str,
    variants: str,
    *,
    seed: int = 1,
    results=None,
    threads=None,
    epsilon: float | None = None,
    iterations: int | None = None,
    budget: int | None = None,
    thresholds: dict,
    progress: bool = True,
    on_step=None,
    on_ruleset=None,
    **sizes,
) -> dict:
    """Library body of ``compare --field equilibrium``: each ruleset's own
    equilibrium (:func:`balance.equilibrium.equilibrium`, warm-started from
    :func:`equilibrium_start`; every run stored, so a re-run reads it back),
    its :func:`balance.equilibrium.summary`, and each property of every
    ruleset against base (:func:`equilibrium_rows`).

    ``on_step(ruleset, step)`` hears each iteration; ``on_ruleset(i, total,
    name, summary, elapsed, eta)`` each finished ruleset (``eta``: the mean
    time per ruleset so far × the rulesets left). ``sizes``: the search's
    game counts (``games``, ``search_games``, ``screen_games``,
    ``confirm_games``) and ``play_games``, ``bootstrap`` of the summary.

    Returns ``{"game", "base", "rulesets": [summary...], "comparisons":
    [{"rules", "rows", "line"}...], "start": [names], "seconds"}``."""
    import time

    from balance import equilibrium as eqm
    from balance import versus

    runner.check_seed(seed)
    eps = eqm.EPSILON if epsilon is None else float(epsilon)
    if not (0 < eps < 0.5):
        raise UserError(f"--epsilon must be a share of score in (0, 0.5), e.g. 0.02; got {epsilon}")
    its = eqm.ITERATIONS if iterations is None else int(iterations)
    if its < 1:
        raise UserError(f"--iterations must be at least 1; got {iterations}")
    bud = eqm.BUDGET if budget is None else int(budget)
    # every search setting checked here, before any ruleset plays a game
    eqm.settings(
        budget=bud, **{k: v for k, v in sizes.items() if k in ("restarts", *eqm.ORACLE_SIZES)}
    )
    summ_kw = {k: sizes.pop(k) for k in ("play_games", "bootstrap") if k in sizes}
    rulesets = config.parse_variant_list(game, variants)
    names = [r.name for r in rulesets]
    dup = next((x for x in names if names.count(x) > 1), None)
    if dup is not None:
        raise UserError(f"--variants names '{dup}' twice; name each ruleset once")
    start = equilibrium_start(game)
    t0 = time.perf_counter()
    summaries = []
    for i, rs in enumerate(rulesets):
        eq = eqm.equilibrium(
            game,
            rs,
            start,
            epsilon=eps,
            iterations=its,
            budget=bud,
            seed=seed,
            results=results,
            threads=threads,
            progress=progress,
            on_step=(lambda st, name=rs.name: on_step(name, st)) if on_step else None,
            **sizes,
        )
        summaries.append(eqm.summary(eq, **summ_kw))
        elapsed = time.perf_counter() - t0
        left = len(rulesets) - i - 1
        if on_ruleset is not None:
            on_ruleset(
                i + 1, len(rulesets), rs.name, summaries[-1], elapsed, elapsed / (i + 1) * left
            )
    b = base_index(names)
    comparisons = []
    for i, s in enumerate(summaries):
        if i == b:
            continue
        rows = equilibrium_rows(summaries[b], s, thresholds)
        line = versus.ruleset_line(
            names[i], [r for r in rows if r["judged"]], names[b], "under equilibrium play"
        )
        comparisons.append({"rules": names[i], "base": names[b], "rows": rows, "line": line})
    return {
        "game": game,
        "base": names[b],
        "start": [s.name for s in start],
        "rulesets": summaries,
        "comparisons": comparisons,
        "seconds": round(time.perf_counter() - t0, 1),
    }
