"""What a command prints: aligned tables (rich) and JSON (``--json``).

Every number a command prints goes through here, so NaN is never a crash:
JSON writes it as null and says why (``why_null``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer


def echo_json(data) -> None:
    typer.echo(json.dumps(finite(data), indent=2, default=json_default, allow_nan=False))


# Why a figure can be null in --json output, by field name (first match wins).
NULL_REASONS = (
    (
        "pair_variance_ratio",
        "every seat-swapped pair scored alike (or every game had the same "
        "result), so an unpaired standard error of 0 leaves the ratio "
        "undefined",
    ),
    ("elo", "a score of 0% or 100% has no finite Elo"),
    ("nash", "the Nash average needs a complete, symmetric matrix"),
    (
        "games_needed",
        "the better side is not ahead, or the games needed are beyond the search limit",
    ),
)
NULL_DEFAULT = (
    "not computable from these games: a rate, mean or ratio with nothing behind "
    "it (no game of this kind, no decided game, or no variance)"
)


def null_reason(key: str) -> str:
    for frag, why in NULL_REASONS:
        if frag in key:
            return why
    return NULL_DEFAULT


def finite(o):
    """``o`` with every NaN or infinite float as None (JSON's null), never a crash:
    an object with such a figure says why in ``why_null`` (field → reason)."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        out = {k: finite(v) for k, v in o.items()}
        why = {
            str(k): null_reason(str(k))
            for k, v in o.items()
            if isinstance(v, float) and not math.isfinite(v)
        }
        if why:
            out["why_null"] = why
        return out
    if isinstance(o, (list, tuple)):
        return [finite(v) for v in o]
    return o


def json_default(o):
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if np.isnan(o) else float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    import pandas as pd

    try:
        if pd.isna(o):  # pandas' missing values (NA, NaT): null
            return None
    except (TypeError, ValueError):
        pass
    return str(o)


def records(df) -> list[dict]:
    """DataFrame rows for JSON (``echo_json`` writes NaN as null, with a reason)."""
    return df.to_dict(orient="records")


def terminal_width() -> int | None:
    """The width of the terminal stdout writes to, or None when it is not one
    (a pipe, a file, a test's capture)."""
    import shutil
    import sys

    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError):  # a closed or unusual stream
        return None
    return shutil.get_terminal_size().columns


def table(
    title: str,
    columns: list[str],
    rows: list[list[str]],
    left: int = 1,
    keep: int | None = None,
) -> None:
    """Print a table; all text is literal (names from configs are never markup).

    On a terminal the table takes its real width; elsewhere (a pipe, a file)
    as wide as its content needs, so nothing is wrapped. The first ``left``
    columns are left-aligned (text), the others right-aligned (figures). The
    first ``keep`` columns (default: ``left``), the names, are never wrapped,
    cut or ellipsised; when a terminal is too narrow, the other columns wrap
    (at spaces first) rather than lose a character."""
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    cells = [[str(x) for x in r] for r in rows]
    t = Table(header_style="bold")
    keep = left if keep is None else keep
    for i, c in enumerate(columns):
        justify = "left" if i < left else "right"
        if i < keep:
            longest = max([Text(r[i]).cell_len for r in cells if i < len(r)] + [Text(c).cell_len])
            t.add_column(Text(c), justify=justify, no_wrap=True, min_width=longest)
        else:
            t.add_column(Text(c), justify=justify, overflow="fold")
    for r in cells:
        t.add_row(*(Text(x) for x in r))
    width = terminal_width()
    if width is None:
        wide = Console(width=100_000)
        width = max(80, Measurement.get(wide, wide.options, t).maximum, Text(title).cell_len)
    console = Console(width=width)
    if title:  # above the table, on one line when there is room (not at the table's width)
        console.print(Text(title, style="italic"))
    console.print(t)


def done(line: str, as_json: bool = False) -> None:
    """A command's last line, what it played and wrote: on stdout after its
    tables, on stderr under ``--json`` (stdout is the JSON alone)."""
    if line:
        typer.echo(line, err=as_json)


def bench_played(n: int, strategies: str) -> str:
    """What ``balance bench <game>`` plays (``bench.bench_game``), for its last line."""
    return (
        f"timed {n:,} games of {strategies} twice at each thread count, in memory, and short "
        "runs in fresh processes (a cold compile in a temporary cache); nothing stored"
    )


def show_bench(res: dict, as_json: bool, played: str = "") -> None:
    """A bench's figures: JSON, or one aligned line each; then ``played``,
    what it ran and wrote (:func:`done`)."""
    if as_json:
        echo_json(res)
        done(played, True)
        return
    _echo_tree(res, "")
    done(played)


def _echo_tree(res: dict, indent: str) -> None:
    """One aligned line a figure; a nested table (a game's row, a profile)
    under its name, indented."""
    width = max(map(len, res), default=0) + 2
    for k, v in res.items():
        if isinstance(v, dict) and v:
            typer.echo(f"{indent}{k}")
            _echo_tree(v, indent + "  ")
        else:
            typer.echo(f"{indent}{k:<{width}}{v}")
