"""Analyses shared by the command line and the study: library functions that
run (or read from the store) the simulations behind each command and return
tables. The CLI only parses options and prints what these return."""

from __future__ import annotations

from balance.errors import UserError
from balance.store import Store


def simulate_command(game: str, variant: str, a: str, b: str, n: int, seed: int,
                     threads, per_game: bool, batch_size: int, results, as_json: bool) -> dict:
    """Library body of ``balance <game> simulate`` (returns the printed data)."""
    import time

    from balance import config, runner

    n = runner.check_games(n)
    rs = config.resolve_variant(game, variant)
    sa, sb = config.load_strategy(game, a), config.load_strategy(game, b)
    spec = runner.RunSpec(rs, sa, sb, n, seed, per_game)
    from balance import tables  # heavy (statistics): only once the input is known good

    store = Store(results)
    t0 = time.perf_counter()
    res = runner.run_many([spec], store=store, threads=threads, batch_size=batch_size)[0]
    elapsed = time.perf_counter() - t0
    row = tables.run_row(res)
    row.update({"cached": res.cached, "elapsed_s": round(elapsed, 3),
                "store": str(store.path(game, spec.key))})
    if not res.cached:
        row["games_per_s"] = round(n / max(elapsed, 1e-9))
    return row


def needed_games(wins, games, precision: float):
    """Games for a win rate's 95% CI to be at most ±``precision`` (vectorised).

    Uses the normal-approximation size at the point of the current Wilson
    interval nearest ½ (its conservative end); the Wilson interval at that
    size is never wider.
    """
    import numpy as np

    from balance.stats import wilson

    lo, hi = wilson(np.asarray(wins), np.asarray(games))
    p = np.clip(0.5, lo, hi)  # the point of [lo, hi] nearest ½
    z = 1.959963984540054
    return np.ceil(z * z * p * (1 - p) / precision**2).astype(np.int64)


def refine_to_precision(specs: list, res: list, precision: float, max_games: int,
                        run) -> list:
    """Re-run every spec whose win-rate CIs (both sides) are wider than
    ±``precision`` with the games they need (at most ``max_games``), until all
    are within it; ``run(specs, extend)`` plays a list of specs, continuing
    the smaller runs given in ``extend``: game i of a seed is the same game at
    any run size, so a larger run extends a smaller one."""
    from dataclasses import replace

    import numpy as np

    for _ in range(4):
        wins = np.array([[r.a_wins, r.b_wins] for r in res])
        games = np.array([r.games for r in res])
        need = needed_games(wins, games[:, None], precision).max(axis=1)
        need = np.minimum(max_games, (need * 1.02).astype(np.int64) + 2)
        need += need % 2
        todo, prev = [], {}
        for i, (spec, r) in enumerate(zip(specs, res)):
            if need[i] > r.games:
                prev[len(todo)] = r
                todo.append(i)
                specs[i] = replace(spec, n_games=int(need[i]))
        if not todo:
            break
        for i, r in zip(todo, run([specs[i] for i in todo], prev)):
            res[i] = r
    return res


def compare_command(game: str, variants: str, strategies: str, n: int, seed: int, threads,
                    batch_size: int, results, precision: float | None = None,
                    max_games: int = 1_000_000) -> tuple[dict, list, list, dict]:
    """Run (or read) the round robin of ``strategies`` under every variant.

    With ``precision``, ``n`` is the pilot size of every match and matches are
    extended until each side's win-rate CI is within ±``precision`` (or
    ``max_games`` is reached). Returns (tables, variant names, strategy names,
    run results by key).
    """
    from itertools import combinations

    from balance import config, runner

    n = runner.check_games(n)
    runner.check_seed(seed)
    rulesets = config.parse_variant_list(game, variants)
    if "base" not in [r.name for r in rulesets]:
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
        return runner.run_many(todo, store=Store(results), threads=threads,
                               batch_size=batch_size, label=f"{game}: {len(todo)} matches",
                               extend=extend)

    res = run(specs)
    if precision is not None:
        if not 0 < precision < 0.5:
            raise UserError(f"--precision must be between 0 and 0.5, got {precision}")
        res = refine_to_precision(specs, res, precision, max_games, run)
    from balance import tables

    runs = dict(zip(keys, res))
    vnames = [r.name for r in rulesets]
    snames = [s.name for s in strats]
    return tables.compare_tables(runs, vnames, snames), vnames, snames, runs


def cards_command(game: str, variant: str, strategy: str, vs: str, n: int, seed: int, threads,
                  batch_size: int, results, restricted: bool = True) -> dict:
    """Card value tables: observational (by card, rank, suit) and restricted play."""
    from balance import config, runner

    n = runner.check_games(n)
    runner.check_seed(seed)
    rs = config.resolve_variant(game, variant)
    s, o = config.load_strategy(game, strategy), config.load_strategy(game, vs)
    eng = config.get_game(game).engine_module()
    specs = [runner.RunSpec(rs, s, o, n, seed)]
    ranks = list(eng.RANK_NAMES) if restricted else []
    specs += [runner.RunSpec(rs, s.restricted(i, r), o, n, seed) for i, r in enumerate(ranks)]
    res = runner.run_many(specs, store=Store(results), threads=threads, batch_size=batch_size,
                          label=f"{game}: card value")
    from balance import tables

    out = {"by_card": tables.card_table(res[0], "card"), "by_rank": tables.card_table(res[0], "rank"),
           "by_suit": tables.card_table(res[0], "suit")}
    if restricted:
        out["restricted"] = tables.restricted_table(res[0], dict(zip(ranks, res[1:])))
    return out


