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
    """Print a table (:func:`table_text`) at the terminal's width; elsewhere (a
    pipe, a file) as wide as its content needs, so nothing is wrapped."""
    from rich.console import Console

    _print_table(Console, title, columns, rows, left, keep, terminal_width())


# How wide a cell must be to show each of its words whole, and to show it on one line.
def _word_width(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(w) for w in text.split()), default=0)


def _line_width(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(line) for line in text.splitlines()), default=0)


def table_text(
    title: str,
    columns: list[str],
    rows: list[list[str]],
    left: int = 1,
    keep: int | None = None,
    width: int | None = None,
) -> str:
    """What :func:`table` prints at ``width`` (None: as wide as the content
    needs), as plain text."""
    import io
    from functools import partial

    from rich.console import Console

    out = io.StringIO()
    _print_table(partial(Console, file=out), title, columns, rows, left, keep, width)
    return out.getvalue()


def _print_table(
    make_console,
    title: str,
    columns: list[str],
    rows: list[list[str]],
    left: int,
    keep: int | None,
    width: int | None,
) -> None:
    """Print a table on ``make_console(width=...)``, ``width`` columns wide
    (None: as wide as its content); all text is literal (names from configs
    are never markup), and no word is ever cut.

    The first ``left`` columns are left-aligned (text), the others
    right-aligned (figures). The first ``keep`` columns (default: ``left``),
    the names, are never wrapped. Every other column is at least as wide as
    its longest word, so a cell that does not fit wraps at spaces, never
    inside a word; the room left over goes where it saves the most lines
    (:func:`_share`), and a rule then separates the rows. When even that is
    too wide, the table is drawn without its box (two spaces between
    columns), then with one space between columns; when that too is too
    wide, each row is printed as a block: its names, then one indented
    ``column: value`` line per figure (wrapped at spaces)."""
    from rich import box
    from rich.console import Console
    from rich.measure import Measurement
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    cells = [[str(x) for x in r] + [""] * (len(columns) - len(r)) for r in rows]
    keep = left if keep is None else keep
    body = list(zip(columns, *cells, strict=True)) if cells else [(c,) for c in columns]
    most = [max(map(_line_width, col)) for col in body]  # one line a cell
    least = [
        m if i < keep else max(map(_word_width, col))
        for i, (m, col) in enumerate(zip(most, body, strict=True))
    ]
    least = [max(1, w) for w in least]
    most = [max(a, b) for a, b in zip(most, least, strict=True)]

    styles = (  # boxed; open (two spaces between columns); tight (one)
        {},
        dict(box=box.SIMPLE_HEAD, show_edge=False, collapse_padding=True, pad_edge=False),
        dict(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0)),
    )

    def build(widths: list[int], style: dict) -> Table:
        # a rule between the rows when a row takes more than one line
        wraps = any(_line_width(x) > w for r in cells for x, w in zip(r, widths, strict=True))
        t = Table(header_style="bold", show_lines=wraps, **style)
        for i, (c, w) in enumerate(zip(columns, widths, strict=True)):
            t.add_column(
                Text(c), justify="left" if i < left else "right", width=w, no_wrap=i < keep
            )
        for r in cells:
            t.add_row(*(Text(x) for x in r))
        return t

    wide = Console(width=1_000_000)

    def needs(t: Table) -> int:
        return Measurement.get(wide, wide.options, t).maximum

    if width is None:
        width = max(80, needs(build(most, styles[0])), Text(title).cell_len)
    console = make_console(width=width)
    if title:  # above the table, on one line when there is room (not at the table's width)
        console.print(Text(title, style="italic"))
    for style in styles:
        spare = width - needs(build(least, style))
        if spare >= 0:
            console.print(build(_share([columns, *cells], least, most, spare), style))
            return
    for k, r in enumerate(cells):  # too many columns for this width: one block a row
        pairs = list(zip(columns, r, strict=True))
        if k:
            console.print()
        name = "  ".join(f"{c}: {x}" if c else x for c, x in pairs[:keep])
        console.print(Text(name, style="bold"))
        for c, x in pairs[keep:]:
            console.print(Padding(Text(f"{c}: {x}" if c else x), (0, 0, 0, 2), expand=False))


def _lines(text: str, width: int) -> int:
    """How many lines ``text`` takes wrapped at spaces ``width`` wide (as Rich
    wraps it, near enough to share the room out)."""
    n = 0
    for line in text.splitlines() or [""]:
        n += 1
        used = 0
        for w in line.split():
            if used and used + 1 + len(w) > width:
                n += 1
                used = len(w)
            else:
                used += (1 if used else 0) + len(w)
    return n


def _share(cells: list[list[str]], least: list[int], most: list[int], spare: int) -> list[int]:
    """Column widths from ``least`` up towards ``most`` with ``spare`` more
    characters for the table ``cells`` (its header row first), given where they make the table shortest: each step widens
    the column that saves the most lines (rows' heights first, then the
    lines of the column's own cells) per character, up to the next width at
    which one of its cells loses a line. Room that saves no line is left out
    (the table is then narrower than the terminal)."""
    widths = list(least)
    cols = list(zip(*cells, strict=True)) if cells else [()] * len(least)
    memo: dict[tuple[int, int], list[int]] = {}

    def lines(c: int, w: int) -> list[int]:
        if (c, w) not in memo:
            memo[c, w] = [_lines(x, w) for x in cols[c]]
        return memo[c, w]

    while spare > 0:
        now = [lines(c, w) for c, w in enumerate(widths)]
        # each row's tallest cell and the tallest of the others: a row's
        # height without column c, in one look
        tops = [
            sorted(((h[r], c) for c, h in enumerate(now)), reverse=True)[:2]
            for r in range(len(cells))
        ]
        best = None
        for c, w in enumerate(widths):
            for k in range(1, min(spare, most[c] - w) + 1):
                after = lines(c, w + k)
                if after != now[c]:
                    others = [
                        (t[1][0] if len(t) > 1 else 1) if t[0][1] == c else t[0][0] for t in tops
                    ]
                    rows = sum(max(o, n) for o, n in zip(others, now[c], strict=True)) - sum(
                        max(o, n) for o, n in zip(others, after, strict=True)
                    )
                    score = (rows / k, (sum(now[c]) - sum(after)) / k)
                    if best is None or score > best[0]:
                        best = (score, c, k)
                    break
        if best is None:
            break
        _, c, k = best
        widths[c] += k
        spare -= k
    return widths


def save_figure(fig, path: Path) -> None:
    """Write a chart (SVG or PNG by suffix) atomically, creating its folder."""
    from balance import charts

    path.parent.mkdir(parents=True, exist_ok=True)
    with charts.chart_style():
        charts.atomic_savefig(fig, path, format=path.suffix.lower()[1:])


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
