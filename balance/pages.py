"""From stored runs to report pages.

``balance report`` and the default study both come through here: stored runs
(read from the store, never re-simulated) are sorted into the round robins of
each variant and the card-value runs, turned into tables (``balance.tables``,
``balance.meta``), charts (``balance.charts``) and plain-language verdicts,
and handed to ``balance.report`` for rendering.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from balance import __version__, charts, design, loadouts, meta, report, robust, tables, verdicts
from balance.config import Ruleset, StoredDeck, Strategy
from balance.errors import UserError
from balance.registry import GAMES, get_game
from balance.runner import DIGEST_PREFIX, RunSpec, command_line, key_rules, load_run, utc_now
from balance.store import QUARANTINE, Damaged, chart_cache, check_key, config_hash, read_manifest


# --------------------------------------------------------------------------- loading runs
def spec_from_resolved(resolved: dict, card_set_path: str | None = None):
    """Rebuild the :class:`~balance.runner.RunSpec` a stored run was made from.

    ``card_set_path``: the manifest's ``card_set_path``, where the card set
    lies when its key names it by digest (``runner.key_rules``)."""
    from dataclasses import replace

    game = resolved["game"]
    name = resolved["variant"]
    variants = () if name == "base" else tuple(name.split("+"))
    rules = dict(resolved["rules"])
    if str(rules.get("card_set", "")).startswith(DIGEST_PREFIX):
        if not card_set_path:
            raise UserError("its card set is named by digest and its manifest names no file")
        rules["card_set"] = str(card_set_path)
    rs = Ruleset(game, name, variants, rules)

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


_KEY_NAME = re.compile(r"[0-9a-f]{16}")  # a store's run folder (a copy elsewhere may have any name)


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
    Stored entries that are not runs (an analysis's own tables, e.g. a
    regression's chunks: a manifest with a ``kind`` and no run config) are
    passed over without a word.
    """
    runs, skipped, _ = _load_runs(paths)
    return runs, skipped


@dataclass(frozen=True)
class Listed:
    """A stored run as ``balance report --list`` counts it: its spec, games and
    manifest, its files checked against their checksums but not parsed."""

    spec: RunSpec
    games: int
    manifest: dict

    @property
    def key(self) -> str:
        return self.spec.key


def _listed(folder: Path, spec: RunSpec, stored: tuple[dict, dict | None]) -> Listed:
    """A run's :class:`Listed` entry once its table files match the checksums
    its manifest records (:func:`~balance.store.read_files`); raises
    :class:`~balance.store.Damaged`."""
    from balance.store import read_files

    manifest, checksums = stored
    read_files(folder, checksums)
    if checksums is None or "run.parquet" not in checksums:
        # an entry from before the checksums, or one without its run table:
        # nothing to count it by but the table itself, so read it in full
        return Listed(spec, load_run(folder, spec, stored).games, manifest)
    return Listed(spec, spec.n_games, manifest)


def _load_runs(paths: list[Path], parse: bool = True) -> tuple[list, list[str], dict]:
    """:func:`load_runs`, and the folder each run was read from (by key).

    ``parse=False`` (``balance report --list``, which only counts runs and
    games): each run's files are checked against their checksums, as every
    read checks them, but not parsed, so the checks of a run's counts
    (:func:`balance.runner.check_run`) are not made; the runs come back as
    :class:`Listed` entries. A file that is missing, truncated, garbage or
    edited still fails its checksum and is left out."""
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
            if "resolved_config" not in manifest and "kind" in manifest:
                continue  # an analysis's stored tables, not a run
            if _KEY_NAME.fullmatch(folder.name):  # a folder of the store: it must be its key's
                try:
                    check_key(manifest, folder.name)
                except Damaged as e:
                    damaged.append(f"{folder}: {e}; left out")
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
                spec = spec_from_resolved(resolved, manifest.get("card_set_path"))
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
            return load_run(*job) if parse else _listed(*job)
        except Damaged as e:
            return e
        except OSError as e:
            return Damaged(f"its files cannot be read ({e.strerror or e})")

    with ThreadPoolExecutor(max_workers=2) as pool:
        loaded = list(pool.map(load, todo))
    runs, where = [], {}
    for (folder, _, _), res in zip(todo, loaded, strict=False):
        if isinstance(res, Damaged):
            damaged.append(f"{folder}: {res}; left out")
        else:
            runs.append(res)
            where[res.key] = folder
    return runs, damaged + skipped, where


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
        g = out.setdefault(
            game, {"matches": {}, "card_base": {}, "restricted": {}, "loadouts": [], "listed": []}
        )
        if r.spec.experiment == loadouts.EXPERIMENT:  # a loadout-matrix run
            g["loadouts"].append(r)
        elif (fa or fb or a == b) and r.cards is None:  # card runs of a game without
            g.setdefault("listed", []).append(r)  # card counters: in the run list only
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
        *group.get("listed", []),
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
    tuned: str | None = None,
) -> dict:
    """A report page for one game: tables, charts, verdicts, manifest, and
    the balance verdict per ruleset (:mod:`balance.design`; thresholds from
    the configs and ``verdict_config``) with its round-cap warnings. With
    ``tuned`` (the name of a tuned strategy in the round robin), the headline
    verdicts re-checked under tuned play (:mod:`balance.robust`)."""

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
        "robust": robust.checks(matches, vnames, tuned, thresholds) if tuned and matches else None,
        "tuned": tuned,
    }


# --------------------------------------------------------------------------- equilibrium play
def shown_path(path) -> str:
    """A path as a page shows it: relative to the project when inside it."""
    from balance.resources import shown

    return shown(path)


def missing_population(game: str, folder) -> dict:
    """What a study records for a game without a shipped equilibrium
    population: where it was looked for and the command that makes one."""
    where = shown_path(folder)
    return {
        "missing": True,
        "folder": where,
        "command": f"balance {game} equilibrium --out {where}",
    }


def add_equilibrium(
    page: dict,
    game: str,
    summary: dict | None,
    chart_dir: Path | None = None,
    png: bool = False,
    verdict_config: Path | None = None,
) -> None:
    """Put the verdicts under equilibrium play on a game's page.

    ``summary``: :func:`balance.equilibrium.measure_shipped`'s dict as the
    study keeps it in its record; :func:`missing_population`'s dict when the
    game ships no population; None when the study record predates equilibrium
    play. The verdicts are judged against the game's targets
    (:func:`balance.design.equilibrium_rows`); the exploitability curve is
    drawn (``chart_dir``: also written there as SVG, and PNG with ``png``)."""
    if summary is None:
        page["equilibrium"] = {"absent": "record"}
        return
    if summary.get("missing"):
        page["equilibrium"] = {"absent": "population", **summary}
        return
    th = design.load_thresholds(game, verdict_config)
    page["equilibrium"] = {"summary": summary, "assessment": design.equilibrium_rows(summary, th)}
    checked = bool(summary.get("shipped") or (summary.get("settings") or {}).get("check"))
    chk = summary.get("check") or {}
    recheck = (
        {"mean": chk.get("gain"), "lo": chk.get("gain_lo"), "hi": chk.get("gain_hi")}
        if chk
        else summary.get("exploitability")
    )
    audits = [
        {
            "label": f"audit {a.get('seed')}",
            "mean": a.get("gain"),
            "lo": a.get("gain_lo"),
            "hi": a.get("gain_hi"),
        }
        for a in summary.get("audits") or []
    ]
    fig = charts.exploitability_chart(
        summary.get("curve") or [],
        float(summary.get("epsilon") or 0.0),
        recheck if checked else None,
        audits=audits,
    )
    write = chart_dir is not None
    stem = Path(chart_dir if write else "chart") / "equilibrium"
    page.setdefault("charts", {})["equilibrium"] = charts.save(fig, stem, png=png, write=write)


# --------------------------------------------------------------------------- experiments
WHERE_KEYS = ("game", "variant", "strategy", "command", "experiment", "seed")


@dataclass
class Section:
    """The runs of one experiment (or of several, pooled) and what heads them."""

    game: str
    records: list[dict]  # the experiment records (one, or several when pooled)
    runs: list  # the runs of the section (each once)
    recorded: int = 0  # runs the records name (0: runs without a record)
    notes: list[str] = field(default_factory=list)

    @property
    def games(self) -> int:
        return sum(r.games for r in self.runs)


def parse_where(items: list[str] | None) -> dict[str, list[str]]:
    """``--where key=value`` (repeatable: values of one key are alternatives,
    different keys must all hold) as {key: [values]}; a bad one is one line."""
    out: dict[str, list[str]] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not sep or not value:
            raise UserError(f"--where takes key=value (e.g. --where variant=base), got '{item}'")
        if key not in WHERE_KEYS:
            raise UserError(f"--where: unknown key '{key}'; the keys are {', '.join(WHERE_KEYS)}")
        if key == "seed":
            try:
                value = str(int(value))
            except ValueError:
                raise UserError(f"--where seed= takes a whole number, got '{value}'") from None
        out.setdefault(key, []).append(value)
    return out


def _strategy_names(side) -> set[str]:
    """A side's names a filter may use: ``turtle@Deck-noX`` answers to itself,
    ``turtle@Deck`` and ``turtle``."""
    name = side.name
    names = {name, _base_strategy_name(side)}
    names |= {n.split("@", 1)[0] for n in list(names)}
    return names


def _run_matches(r, where: dict) -> bool:
    s = r.spec
    if "variant" in where and s.ruleset.name not in where["variant"]:
        return False
    if "seed" in where and str(s.seed) not in where["seed"]:
        return False
    if "strategy" in where:
        names = _strategy_names(s.a) | _strategy_names(s.b)
        if not names & set(where["strategy"]):
            return False
    return True


def _record_matches(rec: dict, where: dict) -> bool:
    if "game" in where and rec["game"] not in where["game"]:
        return False
    if "experiment" in where and not any(rec["id"].startswith(v) for v in where["experiment"]):
        return False
    if "command" in where:
        wanted = {
            " ".join(v.split()[1:]) if v.split()[0] == rec["game"] and len(v.split()) > 1 else v
            for v in where["command"]
        }
        if rec["command"] not in wanted:
            return False
    return True


def experiment_sections(runs: list, where_from: dict) -> tuple[list[Section], list[str]]:
    """The runs grouped by the experiments that made them.

    ``where_from``: the folder each run was read from (by key); each game
    folder's ``_experiments`` records say which runs each experiment used. A
    run may be in several experiments. Runs that no record names are grouped
    by the command line in their manifest ("runs without an experiment
    record"). The second value: lines about unreadable records."""
    from balance import experiments

    by_key = {r.key: r for r in runs}
    records, bad = [], []
    for game_folder in sorted({Path(f).parent for f in where_from.values()}):
        recs, b = experiments.read_folder(game_folder)
        records += recs
        bad += b
    records.sort(key=lambda rec: (rec.get("date") or "", rec["id"]))
    sections, covered = [], set()
    for rec in records:
        rs = [by_key[k] for k in dict.fromkeys(rec["runs"]) if k in by_key]
        rs = [r for r in rs if r.spec.game == rec["game"]]
        if rs:
            sections.append(Section(rec["game"], [rec], rs, len(set(rec["runs"]))))
            covered |= {r.key for r in rs}
    legacy: dict[tuple, list] = {}
    for r in runs:
        if r.key not in covered:
            cmd = str((r.manifest or {}).get("command", "") or "")
            legacy.setdefault((r.spec.game, cmd), []).append(r)
    for (game, cmd), rs in sorted(legacy.items()):
        sections.append(Section(game, [experiments.legacy(game, cmd)], rs))
    return sections, bad


def _variant_design(r) -> str:
    """What makes a variant label's rules: the resolved rules and card set."""
    resolved = (r.manifest or {}).get("resolved_config") or {}
    return config_hash(
        {"rules": key_rules(r.spec.ruleset), "card_set": resolved.get("card_set_digest")}
    )[:8]


def _side_design(r, side) -> str:
    from balance.experiments import side_digest
    from balance.runner import side_record

    rec = side_record(side)
    if r.spec.experiment == loadouts.EXPERIMENT:
        rec.pop("loadout", None)  # the loadout matrix's axis, tabulated by loadout
    return side_digest(rec)


def _conflicts(runs: list) -> tuple[dict, dict]:
    """Labels that name different designs among ``runs``: variant name →
    its rules digests, strategy name → its spec digests (only names with
    more than one)."""
    variants: dict[str, set] = {}
    sides: dict[str, set] = {}
    for r in runs:
        variants.setdefault(r.spec.ruleset.name, set()).add(_variant_design(r))
        for side in (r.spec.a, r.spec.b):
            sides.setdefault(side.name, set()).add(_side_design(r, side))
    return (
        {k: v for k, v in variants.items() if len(v) > 1},
        {k: v for k, v in sides.items() if len(v) > 1},
    )


def _relabel_variants(runs: list, names: dict) -> list:
    """Runs whose variant label names different rules get the label
    ``name (rules <digest>)``: never one cell for two designs. The run keeps
    its stored key."""
    from dataclasses import replace

    out = []
    for r in runs:
        name = r.spec.ruleset.name
        if name not in names:
            out.append(r)
            continue
        spec = replace(
            r.spec, ruleset=replace(r.spec.ruleset, name=f"{name} (rules {_variant_design(r)})")
        )
        spec.__dict__["key"] = r.spec.key  # the stored run's key (cached_property's slot)
        out.append(replace(r, spec=spec))
    return out


def _sections(runs: list, where_from: dict, where: dict, pool: bool) -> tuple[list, list[str]]:
    """The report's sections: one per experiment, or one pooling them all."""
    sections, bad = experiment_sections(runs, where_from)
    kept = []
    for sec in sections:
        if not _record_matches(sec.records[0], where):
            continue
        rs = [r for r in sec.runs if _run_matches(r, where)]
        if rs:
            sec.runs = rs
            kept.append(sec)
    if not kept:
        what = " ".join(f"{k}={v}" for k, vs in where.items() for v in vs)
        raise UserError(
            "no stored run matches "
            + (f"--where {what}" if what else "these paths")
            + " (balance report --list shows the experiments in a store)"
        )
    if pool:
        pooled: dict[str, Section] = {}
        for sec in kept:
            p = pooled.setdefault(sec.game, Section(sec.game, [], []))
            p.records += sec.records
            seen = {r.key for r in p.runs}
            p.runs += [r for r in sec.runs if r.key not in seen]
            p.recorded += sec.recorded
        kept = list(pooled.values())
    for sec in kept:
        variants, sides = _conflicts(sec.runs)
        if pool and len(sec.records) > 1 and sides:
            name, digests = sorted(sides.items())[0]
            raise UserError(
                f"cannot pool: strategy '{name}' has {len(digests)} different specs among "
                f"these runs ({', '.join(sorted(digests))}); report the experiments apart "
                "(without --pool, or --where experiment=ID)"
            )
        if variants:
            sec.runs = _relabel_variants(sec.runs, variants)
            sec.notes.append(
                "Variant label"
                + ("s " if len(variants) > 1 else " ")
                + ", ".join(f"'{v}'" for v in sorted(variants))
                + (" name" if len(variants) > 1 else " names")
                + " different rules among these runs; each set of rules is shown "
                "apart, labelled by its rules digest."
            )
        if sides:
            sec.notes.append(
                "Strategy name"
                + ("s " if len(sides) > 1 else " ")
                + ", ".join(f"'{v}'" for v in sorted(sides)[:5])
                + (f" (+{len(sides) - 5} more)" if len(sides) > 5 else "")
                + (" stand" if len(sides) > 1 else " stands")
                + " for different specs or decks among these runs, so they are "
                "listed below, not tabulated together."
            )
    return kept, bad


def _header(sec: Section, pool: bool) -> tuple[str, list[str], dict]:
    """A section's name, its opening lines and its manifest block."""
    from balance.experiments import LEGACY, describe_plan

    title = get_game(sec.game).title
    lines, extra = [], {}
    if len(sec.records) > 1:
        name = f"{title}: {len(sec.records)} experiments pooled"
        lines.append(
            f"This section pools the runs of {len(sec.records)} experiments: "
            + "; ".join(
                f"{rec['id'][:12]} ({rec.get('command_line') or rec['command']})"
                for rec in sec.records
            )
            + ". Where two runs play the same matchup, the one with more games is shown."
        )
        extra["experiments"] = ", ".join(rec["id"] for rec in sec.records)
    else:
        rec = sec.records[0]
        cmd = rec.get("command_line") or rec["command"]
        if rec.get("legacy"):
            name = f"{title}: {rec['command']} ({LEGACY})"
            lines.append(f"Runs without an experiment record, made by `{cmd}`.")
        else:
            name = f"{title}: {rec['command']} {rec['id'][:8]}"
            plan = describe_plan(rec.get("plan") or {})
            lines.append(
                f"Experiment {rec['id']}: `{cmd}`"
                + (f" ({rec['date']})" if rec.get("date") else "")
                + (f"; plan: {plan}" if plan else "")
                + "."
            )
        extra["experiment"] = rec["id"]
        extra["experiment_command"] = cmd
    if sec.recorded and len(sec.runs) < sec.recorded:
        lines.append(
            f"{len(sec.runs):,} of the {sec.recorded:,} runs the experiment"
            f"{'s' if len(sec.records) > 1 else ''} recorded are shown (the others were "
            "filtered out, not given, missing, damaged or made by another engine version)."
        )
    lines += sec.notes
    return name, lines, extra


def section_page(sec: Section, cache_dir: Path | None = None, pool: bool = False) -> dict:
    """The page section of one experiment (or of a pool of them)."""
    listed = sec.records[0].get("view") == "runs" or any("not tabulated" in n for n in sec.notes)
    if listed:
        group = {"matches": {}, "card_base": {}, "restricted": {}, "loadouts": [], "listed": []}
        group["listed"] = list(sec.runs)
    else:
        group = organise(sec.runs)[sec.game]
    name, lines, extra = _header(sec, pool)
    if listed and sec.records[0].get("view") == "runs":
        lines.append(
            f"Its own page (made by `balance {sec.game} {sec.records[0]['command']}`) "
            "shows the analysis; here are the runs it played."
        )
    page = build_page(sec.game, group, extra_manifest=extra, cache_dir=cache_dir)
    page["name"] = name
    page["summary"] = [*lines, *page.get("summary", [])]
    return page


def list_experiments(paths: list[Path]) -> list[dict]:
    """``balance report --list``: one row per experiment found under ``paths``."""
    from balance import experiments

    runs, _, where_from = _load_runs(paths, parse=False)
    sections, _ = experiment_sections(runs, where_from)
    rows = [
        {
            "id": sec.records[0]["id"],
            "game": sec.game,
            "command": sec.records[0]["command"],
            "date": sec.records[0].get("date") or "",
            "runs": len(sec.runs),
            "recorded": sec.recorded,
            "games": sec.games,
            "command_line": sec.records[0].get("command_line") or "",
        }
        for sec in sections
    ]
    # experiments with no stored run here (e.g. an analysis that keeps only its tables)
    shown = {r["id"] for r in rows}
    for folder in sorted({Path(f).parent for f in where_from.values()} | _game_folders(paths)):
        for rec in experiments.read_folder(folder)[0]:
            if rec["id"] not in shown:
                shown.add(rec["id"])
                rows.append(
                    {
                        "id": rec["id"],
                        "game": rec["game"],
                        "command": rec["command"],
                        "date": rec.get("date") or "",
                        "runs": 0,
                        "recorded": len(rec["runs"]),
                        "games": 0,
                        "command_line": rec.get("command_line") or "",
                    }
                )
    return rows


def _game_folders(paths: list[Path]) -> set[Path]:
    """Folders under ``paths`` that hold experiment records."""
    from balance.experiments import FOLDER

    out = set()
    for p in paths:
        p = Path(p)
        if (p / FOLDER).is_dir():
            out.add(p)
        out |= {d.parent for d in p.glob(f"*/{FOLDER}") if d.is_dir()}
    return out


def report_from_runs(
    paths: list[Path],
    out: Path,
    results=None,
    title: str | None = None,
    where: list[str] | None = None,
    pool: bool = False,
) -> tuple[Path, list[str]]:
    """``balance report RUNS -o OUT``: one self-contained page for the given
    runs, a section per experiment (:func:`experiment_sections`), filtered by
    ``where`` (``key=value`` items, :func:`parse_where`). Run folders named
    one by one, or ``pool``, make one section pooling them; it says which
    experiments it pools and never puts two designs under one label (a
    variant label with different rules is shown apart; a strategy name with
    different specs is refused)."""

    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"-o must name an .html file, got '{out}'")
    conditions = parse_where(where)
    runs, skipped, where_from = _load_runs(paths)
    if not runs:
        raise UserError(
            "none of the given runs can be used: " + (skipped[0] if skipped else "no runs")
        )
    pool = pool or all((Path(p) / "manifest.json").is_file() for p in paths)
    sections, bad = _sections(runs, where_from, conditions, pool)
    cache = chart_cache(results)
    order = {g: i for i, g in enumerate(GAMES)}
    sections.sort(key=lambda sec: order.get(sec.game, len(order)))
    pages = [section_page(sec, cache_dir=cache, pool=pool) for sec in sections]
    if title:
        for p in pages:
            p["title"] = title
    path = report.write_page(out, pages)
    return path, skipped + bad
