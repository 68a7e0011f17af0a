"""Experiments: which command, with which plan, made (or reused) which stored runs.

Every command that plays games records the experiment it ran with
:func:`record`: its command name (``compare``, ``power``, ...), the command
line, the game, its plan (variants with the digest of their resolved rules,
strategies with the digest of their specs, games, seed, precision, ...), the
keys (``config_hash``) of the runs its figures come from, and the date. The
record is one small JSON file in the store,
``<results>/<game>/_experiments/<id>.json``, written atomically; its id is a
hash of the game, the command name and the plan, so running the same command
again maps to the same experiment (and rewrites its record). A run may belong
to several experiments (a stored run a later command read back).

``balance report`` (:mod:`balance.pages`) groups stored runs by these records
and never pools runs of different experiments unless asked to. Runs stored
before the records existed have none: they are grouped by the command line in
their manifest, as "runs without an experiment record".
"""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

from balance.store import config_hash, results_dir, warn, write_text_atomic

FOLDER = "_experiments"  # under each game's folder of the store
FORMAT = 1
LEGACY = "runs without an experiment record"


def experiment_id(game: str, command: str, plan: dict) -> str:
    """The id of an experiment: a hash of its game, command name and plan
    (the same command with the same plan is the same experiment)."""
    return config_hash({"game": game, "command": command, "plan": plan})


def folder(store_root, game: str) -> Path:
    return results_dir(store_root) / game / FOLDER


def rules_digest(rules: dict) -> str:
    """A short digest of resolved rules (what tells two rule sets of one name apart)."""
    return config_hash(rules)[:8]


def ruleset_plan(rs) -> dict:
    """A ruleset as a plan records it: its name and the digest of its resolved
    rules as a run key hashes them (a card set's path by its content digest)."""
    from balance.runner import key_rules

    return {"name": rs.name, "rules_digest": rules_digest(key_rules(rs))}


def side_digest(side: dict) -> str:
    """A short digest of a side as a run records it (spec, deck, restriction),
    without its name."""
    return config_hash({k: v for k, v in side.items() if k != "name"})[:8]


def strategy_plan(s) -> dict:
    """A strategy as a plan records it: its name and the digest of its spec (and deck)."""
    from balance.runner import side_record

    return {"name": s.name, "spec_digest": side_digest(side_record(s))}


def _clean(o):
    """``o`` as JSON can hold it: tuples as lists, NaN as None, paths as text."""
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, list | tuple | set | frozenset):
        return [_clean(v) for v in (sorted(o, key=str) if isinstance(o, set | frozenset) else o)]
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, str | int | float | bool) or o is None:
        return o
    return str(o)


def record(
    store_root, game: str, command: str, plan: dict, run_keys, view: str = "tables"
) -> Path | None:
    """Record that ``command`` (its name, e.g. ``compare``) ran ``plan`` on
    ``game`` and that its figures come from the stored runs ``run_keys``.

    ``view``: how a report shows the experiment: ``tables`` (the round-robin
    page) or ``runs`` (a list of its runs; the command makes its own page).
    Returns the record's path; a record that cannot be written is a warning
    (the runs are stored already), and None."""
    from balance import __version__
    from balance.runner import command_line, utc_now

    plan = _clean(plan)
    eid = experiment_id(game, command, plan)
    keys = list(dict.fromkeys(str(k) for k in run_keys))
    data = {
        "format": FORMAT,
        "id": eid,
        "game": game,
        "command": command,
        "command_line": command_line(),
        "plan": plan,
        "runs": keys,
        "view": view,
        "date": utc_now(),
        "toolkit_version": __version__,
    }
    path = folder(store_root, game) / f"{eid}.json"
    try:
        write_text_atomic(path, json.dumps(data, indent=1, allow_nan=False))
    except OSError as e:
        warn(f"could not record the experiment in {path} ({e.strerror or e})")
        return None
    return path


def _valid(data) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("id"), str)
        and isinstance(data.get("command"), str)
        and isinstance(data.get("game"), str)
        and isinstance(data.get("runs"), list)
        and all(isinstance(k, str) for k in data["runs"])
        and isinstance(data.get("plan", {}), dict)
    )


def read_folder(game_folder: Path) -> tuple[list[dict], list[str]]:
    """The experiment records kept beside the runs of ``game_folder`` (a
    store's ``<game>`` folder), and a line for each unreadable one."""
    recs, bad = [], []
    d = Path(game_folder) / FOLDER
    if not d.is_dir():
        return recs, bad
    for p in sorted(d.glob("*.json")):
        try:
            data = json.loads(p.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            data = None
        if not _valid(data):
            bad.append(f"{p}: not an experiment record; left out")
            continue
        data.setdefault("view", "tables")
        data.setdefault("command_line", "")
        data.setdefault("date", "")
        data["path"] = str(p)
        recs.append(data)
    return recs, bad


def command_name(command_line: str, game: str | None = None) -> str:
    """The command's name from its line (``balance tosk compare -n 200`` →
    ``compare``; ``balance study`` → ``study``): the words after the
    program and the game, up to the first option."""
    try:
        words = shlex.split(command_line or "")
    except ValueError:
        words = (command_line or "").split()
    words = words[1:]
    if words and game is not None and words[0] == game:
        words = words[1:]
    out = []
    for w in words:
        if w.startswith("-"):
            break
        out.append(w)
    return " ".join(out[:2]) or "?"


def legacy(game: str, command_line: str) -> dict:
    """The stand-in record of stored runs that have none: grouped by the
    command line in their manifest."""
    return {
        "id": "cmd-" + config_hash({"game": game, "command_line": command_line})[:12],
        "game": game,
        "command": command_name(command_line, game),
        "command_line": command_line,
        "plan": {},
        "runs": [],
        "view": "tables",
        "date": "",
        "legacy": True,
    }


def describe_plan(plan: dict, limit: int = 400) -> str:
    """A plan in one line: ``variants base, force; strategies a, b; n 200; seed 1``."""
    parts = []
    for k, v in plan.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) and "name" in x for x in v):
            text = ", ".join(
                str(x["name"])
                + (
                    f" (rules {x['rules_digest']})"
                    if "rules_digest" in x and k == "variants"
                    else ""
                )
                for x in v
            )
        elif isinstance(v, dict) and "name" in v:
            text = str(v["name"])
        elif isinstance(v, list):
            text = ", ".join(map(str, v))
        else:
            text = str(v)
        parts.append(f"{k.replace('_', ' ')} {text}")
    out = "; ".join(parts)
    return out if len(out) <= limit else out[: limit - 1] + "…"
