"""From stored runs to report pages.

``balance report`` and the default study both come through here: stored runs
(read from the store, never re-simulated) are sorted into the round robins of
each variant and the card-value runs, turned into tables (``balance.tables``,
``balance.meta``), charts (``balance.charts``) and plain-language verdicts,
and handed to ``balance.report`` for rendering.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from balance import __version__, charts, design, loadouts, meta, report, tables, verdicts
from balance.config import Ruleset, StoredDeck, Strategy
from balance.errors import UserError
from balance.registry import GAMES, get_game
from balance.runner import RunSpec, command_line, load_run, utc_now
from balance.store import QUARANTINE, Damaged, chart_cache, config_hash, read_manifest


# --------------------------------------------------------------------------- loading runs
def spec_from_resolved(resolved: dict):
    """Rebuild the :class:`~balance.runner.RunSpec` a stored run was made from."""
    from dataclasses import replace

    game = resolved["game"]
    name = resolved["variant"]
    variants = () if name == "base" else tuple(name.split("+"))
    rs = Ruleset(game, name, variants, dict(resolved["rules"]))

    def strat(d):
        st = Strategy(game, d["name"], d["spec"], "", int(d.get("forbidden", 0)), d.get("loadout"))
        if d.get("deck") is not None:  # games with decks: the deck as the run recorded it,
            # bound by its names to the run's own card set when the RunSpec is made
            rec = d["deck"]
            names = rec.get("names")
            deck = StoredDeck(
                rec["name"],
                int(rec["primal"]),
                tuple(int(c) for c in rec["cards"]),
                rec.get("primal_name"),
                None if names is None else tuple(names),
            )
            st = replace(st, deck=deck, n_cards=rs.card_set().n_cards)
        return st

    return RunSpec(
        rs,
        strat(resolved["a"]),
        strat(resolved["b"]),
        int(resolved["n_games"]),
        int(resolved["seed"]),
        bool(resolved.get("per_game", False)),
        str(resolved.get("experiment", "")),
    )


def _run_folders(path: Path) -> list[Path]:
    """The run folders at or under ``path``: not the store's temporary
    folders (``.tmp-*``) nor the damaged entries it has set aside
    (``_quarantine``), unless ``path`` names them."""

    if (path / "manifest.json").is_file():
        return [path]
    return sorted(
        p.parent
        for p in path.rglob("manifest.json")
        if not any(
            part.startswith(".") or part == QUARANTINE for part in p.parent.relative_to(path).parts
        )
    )


def load_runs(paths: list[Path]) -> tuple[list, list[str]]:
    """Every stored run under ``paths`` (run folders, or folders holding them).

    Runs made by another engine version or store format are skipped (their
    numbers may differ from what this engine computes), and so are damaged
    runs (a file that fails its checksum, counts that do not add up: see
    :func:`balance.runner.load_run`), which are left where they are; the
    second value lists why each skipped run was skipped, damaged ones first.
    """
    from concurrent.futures import ThreadPoolExecutor

    todo, skipped, damaged, seen = [], [], [], set()
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise UserError(f"no such run or folder: '{path}'")
        folders = _run_folders(path)
        if not folders:
            raise UserError(f"'{path}' holds no stored runs (no manifest.json under it)")
        for folder in folders:
            if folder.resolve() in seen:
                continue
            seen.add(folder.resolve())
            try:
                manifest, checksums = read_manifest(folder)
            except Damaged as e:
                damaged.append(f"{folder}: {e}; left out")
                continue
            except OSError as e:
                damaged.append(
                    f"{folder}: manifest.json cannot be read ({e.strerror or e}); left out"
                )
                continue
            try:
                resolved = manifest["resolved_config"]
                game = get_game(resolved["game"])
            except (TypeError, KeyError, UserError):
                skipped.append(f"{folder}: not a run of this toolkit")
                continue
            if resolved.get("engine_version") != game.engine_module().VERSION:
                skipped.append(
                    f"{folder}: engine {resolved.get('engine_version')}, "
                    f"this is {game.engine_module().VERSION}"
                )
                continue
            try:
                spec = spec_from_resolved(resolved)
            except UserError as exc:  # e.g. its card set was edited since: a deck's card is gone
                skipped.append(f"{folder}: {exc}")
                continue
            except (TypeError, ValueError, KeyError, AttributeError) as e:
                damaged.append(f"{folder}: manifest.json does not describe a run ({e}); left out")
                continue
            if spec.key != folder.name and spec.key != manifest.get("config_hash"):
                skipped.append(f"{folder}: stored with another format")
                continue
            todo.append((folder, spec, (manifest, checksums)))

    # Parquet reads release the GIL: two threads read twice as many runs a second
    def load(job):
        try:
            return load_run(*job)
        except Damaged as e:
            return e
        except OSError as e:
            return Damaged(f"its files cannot be read ({e.strerror or e})")

    with ThreadPoolExecutor(max_workers=2) as pool:
        loaded = list(pool.map(load, todo))
    runs = []
    for (folder, _, _), res in zip(todo, loaded, strict=False):
        if isinstance(res, Damaged):
            damaged.append(f"{folder}: {res}; left out")
        else:
            runs.append(res)
    return runs, damaged + skipped


def _base_strategy_name(strategy) -> str:
    return strategy.name if not strategy.forbidden_ranks else strategy.name.rsplit("-no", 1)[0]


def organise(runs: list) -> dict[str, dict]:
    """Sort runs by game: round-robin matches and card-value groups.

    Where several runs share a config but differ in size (a pilot and its
    extension), the largest is kept; matches of a variant pair with base only
    on the same seed (``balance.tables.variant_diffs``).
    """

    best: dict[tuple, object] = {}
    for r in runs:
        s = r.spec
        k = (
            s.game,
            s.ruleset.name,
            s.experiment,
            s.a.name,
            s.a.forbidden_ranks,
            s.b.name,
            s.b.forbidden_ranks,
            s.seed,
        )
        if k not in best or r.games > best[k].games:
            best[k] = r
    # one seed per matchup: the one with the most games
    chosen: dict[tuple, object] = {}
    for k, r in best.items():
        k2 = k[:-1]
        if k2 not in chosen or r.games > chosen[k2].games:
            chosen[k2] = r
    out: dict[str, dict] = {}
    for (game, variant, _, a, fa, b, fb), r in chosen.items():
        g = out.setdefault(game, {"matches": {}, "card_base": {}, "restricted": {}, "loadouts": []})
        if r.spec.experiment == loadouts.EXPERIMENT:  # a loadout-matrix run
            g["loadouts"].append(r)
        elif fa or fb:
            g["restricted"].setdefault(
                (variant, _base_strategy_name(r.spec.a), b, r.spec.seed), []
            ).append(r)
        elif a == b:
            g["card_base"][(variant, a, b, r.spec.seed)] = r
        else:
            g["matches"][(variant, a, b)] = r
    for g in out.values():  # a card run against another strategy is a match too
        for variant, a, b, seed in g["restricted"]:
            if (variant, a, b, seed) not in g["card_base"] and (variant, a, b) in g["matches"]:
                m = g["matches"][(variant, a, b)]
                if m.spec.seed == seed:
                    g["card_base"][(variant, a, b, seed)] = m
    return out


# --------------------------------------------------------------------------- tables
def _variant_order(names) -> list[str]:
    return sorted(set(names), key=lambda n: (n != "base", n.count("+"), n))


def game_tables(game: str, group: dict) -> tuple[dict, list[str], list[str]]:
    """Every table of one game's page from its organised runs."""

    matches = group["matches"]
    vnames = _variant_order(v for v, _, _ in matches)
    snames = sorted({s for _, a, b in matches for s in (a, b)})
    t = tables.compare_tables(matches, vnames, snames) if matches else {}
    if matches:
        t.update(meta.meta_tables(matches, vnames, snames))
    cards, restricted = [], []
    eng = get_game(game).engine_module()
    ranks = list(getattr(eng, "RANK_NAMES", []))
    for (variant, s, o, seed), base in sorted(group["card_base"].items()):
        rest = group["restricted"].get((variant, s, o, seed), [])
        cards.append(tables.card_table(base, "card"))
        if rest:
            by_rank = {}
            for r in rest:
                mask = r.spec.a.forbidden_ranks
                if mask and mask & (mask - 1) == 0 and mask.bit_length() - 1 < len(ranks):
                    by_rank[ranks[mask.bit_length() - 1]] = r
            by_rank = {k: by_rank[k] for k in ranks if k in by_rank}
            restricted.append(tables.restricted_table(base, by_rank))
    if group.get("loadouts"):
        # the first strategy pairing gets every table; each further pairing
        # adds its item-pair and maneuver scores (is the ranking robust?)
        pairings = loadouts.by_pairing(group["loadouts"])
        t.update(loadouts.loadout_tables(game, next(iter(pairings.values()))))
        if len(pairings) > 1:
            t["loadout_pairings"] = loadouts.pairing_choice_table(game, group["loadouts"])
    if "init_bid" in getattr(eng, "METRICS", {}):
        t["initiative"] = loadouts.initiative_table(_all_runs(group))
    if cards:
        t["cards"] = pd.concat(cards, ignore_index=True)
    if restricted:
        t["restricted"] = pd.concat(restricted, ignore_index=True)
    return t, vnames, snames


def _all_runs(group: dict) -> list:
    seen, out = set(), []
    for r in [
        *group["matches"].values(),
        *group["card_base"].values(),
        *(x for rs in group["restricted"].values() for x in rs),
        *group.get("loadouts", []),
    ]:
        if r.key not in seen:
            seen.add(r.key)
            out.append(r)
    return out


def run_list(group: dict) -> pd.DataFrame:
    """One row per run on the page: what it is, its size, seed and store key."""
    rows = []
    for r in _all_runs(group):
        s = r.spec
        rows.append(
            {
                "variant": s.ruleset.name,
                "a": s.a.name,
                "b": s.b.name,
                "games": r.games,
                "seed": s.seed,
                "config_hash": r.key,
                "date": (r.manifest or {}).get("date", ""),
                "command": (r.manifest or {}).get("command", ""),
            }
        )
    return pd.DataFrame(rows)


def page_manifest(
    game: str, group: dict, command: str | None = None, extra: dict | None = None
) -> dict:
    """The reproducibility block of a page."""
    g = get_game(game)
    runs = _all_runs(group)
    seeds = sorted({r.spec.seed for r in runs})
    cmds = sorted({(r.manifest or {}).get("command", "") for r in runs} - {""})
    m = {
        "command": command or command_line(),
        "seed": seeds[0] if len(seeds) == 1 else ", ".join(map(str, seeds)),
        "config_hash": config_hash(sorted(r.key for r in runs)),
        "engine_version": f"{g.engine} {g.engine_module().VERSION} (toolkit {__version__})",
        "date": utc_now(),
        "games_total": sum(r.games for r in runs),
        "runs": len(runs),
        "rulings": list(g.ruling_lines()),
        "variants": _variant_order(r.spec.ruleset.name for r in runs),
    }
    if cmds:
        m["simulated_by"] = "; ".join(cmds[:5]) + (
            f" (+{len(cmds) - 5} more)" if len(cmds) > 5 else ""
        )
    m.update(extra or {})
    return m


def build_page(
    game: str,
    group: dict,
    chart_dir: Path | None = None,
    png: bool = False,
    command: str | None = None,
    extra_manifest: dict | None = None,
    cache_dir: Path | None = None,
    verdict_config: Path | None = None,
) -> dict:
    """A report page for one game: tables, charts, verdicts, manifest, and
    the balance verdict per ruleset (:mod:`balance.design`; thresholds from
    the configs and ``verdict_config``) with its round-cap warnings."""

    t, vnames, snames = game_tables(game, group)
    matches = group["matches"]
    thresholds = design.load_thresholds(game, verdict_config)
    assessment = design.assess(matches, vnames, snames, thresholds, tables=t) if matches else None
    t["runs"] = run_list(group)
    g = get_game(game)
    svgs = charts.all_charts(t, chart_dir, matrix_variants=vnames, png=png, cache_dir=cache_dir)
    manifest = page_manifest(game, group, command, extra_manifest)
    return {
        "game": game,
        "name": g.title,
        "tables": t,
        "charts": svgs,
        "manifest": manifest,
        "summary": verdicts.verdicts(g.title, t),
        "variants": vnames,
        "strategies": snames,
        "assessment": assessment,
        "cap_warnings": design.cap_warnings(matches, thresholds["round_cap_max"]),
    }


def report_from_runs(
    paths: list[Path], out: Path, results=None, title: str | None = None
) -> tuple[Path, list[str]]:
    """``balance report RUNS -o OUT``: one self-contained page for the given runs."""

    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"-o must name an .html file, got '{out}'")
    runs, skipped = load_runs(paths)
    if not runs:
        raise UserError(
            "none of the given runs can be used: " + (skipped[0] if skipped else "no runs")
        )
    groups = organise(runs)
    cache = chart_cache(results)
    pages = [build_page(game, groups[game], cache_dir=cache) for game in GAMES if game in groups]
    if title:
        for p in pages:
            p["title"] = title
    path = report.write_page(out, pages)
    return path, skipped
