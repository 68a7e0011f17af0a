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

    from balance import config, runner, tables

    n = runner.check_games(n)
    rs = config.resolve_variant(game, variant)
    sa, sb = config.load_strategy(game, a), config.load_strategy(game, b)
    spec = runner.RunSpec(rs, sa, sb, n, seed, per_game)
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


def compare_command(game: str, variants: str, strategies: str, n: int, seed: int, threads,
                    batch_size: int, results) -> tuple[dict, list, list, dict]:
    """Run (or read) the round robin of ``strategies`` under every variant.

    Returns (tables, variant names, strategy names, run results by key).
    """
    from balance import config, runner, tables

    n = runner.check_games(n)
    rulesets = config.parse_variant_list(game, variants)
    if "base" not in [r.name for r in rulesets]:
        rulesets.insert(0, config.resolve_variant(game, "base"))  # differences need base
    strats = config.parse_strategy_list(game, strategies)
    if len(strats) < 2:
        raise UserError("--strategies needs at least two strategies for a round robin")
    by_name = {s.name: s for s in strats}
    specs, keys = [], []
    for rs in rulesets:
        for a, b in tables.round_robin_pairs([s.name for s in strats]):
            specs.append(runner.RunSpec(rs, by_name[a], by_name[b], n, seed))
            keys.append((rs.name, a, b))
    res = runner.run_many(specs, store=Store(results), threads=threads, batch_size=batch_size,
                          label=f"{game}: {len(specs)} matches")
    runs = dict(zip(keys, res))
    vnames = [r.name for r in rulesets]
    snames = [s.name for s in strats]
    return tables.compare_tables(runs, vnames, snames), vnames, snames, runs


def cards_command(game: str, variant: str, strategy: str, vs: str, n: int, seed: int, threads,
                  batch_size: int, results, restricted: bool = True) -> dict:
    """Card value tables: observational (by card, rank, suit) and restricted play."""
    from balance import config, runner, tables

    n = runner.check_games(n)
    rs = config.resolve_variant(game, variant)
    s, o = config.load_strategy(game, strategy), config.load_strategy(game, vs)
    eng = config.get_game(game).engine_module()
    specs = [runner.RunSpec(rs, s, o, n, seed)]
    ranks = list(eng.RANK_NAMES) if restricted else []
    specs += [runner.RunSpec(rs, s.restricted(i, r), o, n, seed) for i, r in enumerate(ranks)]
    res = runner.run_many(specs, store=Store(results), threads=threads, batch_size=batch_size,
                          label=f"{game}: card value")
    out = {"by_card": tables.card_table(res[0], "card"), "by_rank": tables.card_table(res[0], "rank"),
           "by_suit": tables.card_table(res[0], "suit")}
    if restricted:
        out["restricted"] = tables.restricted_table(res[0], dict(zip(ranks, res[1:])))
    return out


