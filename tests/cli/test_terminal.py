"""What the terminal shows: tables that never cut a word at any width from
80 columns, and help texts shown as written (a bracketed word such as
``[rules]`` is not taken for Rich markup)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from balance.cli import output

# A sweep table as `balance tosk sweep --rule start_hp=18..22:2 -n 200` printed
# it (its figures), with a longer name and verdict: at 120 columns Rich's
# "fold" printed "balance|d", "script'|s" and "(script|ed".
COLUMNS = [
    "start_hp",
    "seat 1 wins",
    "best strategy",
    "worst strategy",
    "Nash support",
    "rounds",
    "draws",
    "round cap",
    "lead changes",
    "comebacks",
    "verdict",
]
ROWS = [
    [
        f"start_hp={hp}+high-defend-hand-then-absorb",
        "50.0% [48.4, 51.7]",
        "balanced 77.3% [75.3, 79.2]",
        "random 0.50% [0.19, 1.07]",
        "3",
        "16.8 [16.5, 17.1]",
        "0.12% [0.05, 0.27]",
        "0.12% [0.05, 0.27]",
        "2.30 [2.20, 2.39]",
        "60.0% [58.2, 61.7]",
        "not balanced: best script's score (scripted field); unclear: strategy diversity",
    ]
    for hp in (18, 20, 22)
]
WIDTHS = [80, 81, 90, 100, 119, 120, 140, 200]


def _cut_words(text: str, columns: list[str], rows: list[list[str]]) -> list[str]:
    """The words of the cells and headers that ``text`` does not show whole as
    often as the table holds them (a word cut across two lines is missing
    once); the title is left out of the text's count."""
    table_text = "\n".join([*columns, *(c for r in rows for c in r)])
    words = set(table_text.split())
    return sorted(w for w in words if text.count(w) < table_text.count(w))


def _check(text: str, width: int, columns=COLUMNS, rows=ROWS) -> None:
    assert not _cut_words(text, columns, rows), _cut_words(text, columns, rows)
    assert max(len(line) for line in text.splitlines()) <= width
    for r in rows:  # every name whole on one line
        assert any(r[0] in line for line in text.splitlines())


@pytest.mark.parametrize("width", WIDTHS)
def test_a_table_never_cuts_a_word(width):
    text = output.table_text("A sweep", COLUMNS, ROWS, width=width)
    _check(text, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_table_of_few_columns_wraps_its_long_text_at_spaces(width):
    """The ``rules`` table's shape: short names, one long column of prose."""
    meaning = (
        "Stamina each player starts with; a hit below zero-stamina-threshold ends the game "
        "(rulebook section 3.2, 'Exhaustion'), unless a heal-on-the-brink card is in play"
    )
    cols = ["key", "base", "allowed", "meaning"]
    rows = [["start_hp", "20", "1..99", meaning], ["hand_size_with_long_name", "5", "1..10", "x"]]
    text = output.table_text("rules", cols, rows, left=4, keep=1, width=width)
    _check(text, width, cols, rows)
    assert "┏" in text  # four columns fit boxed at every width from 80


def test_a_table_that_fits_is_boxed_on_one_line_a_row():
    text = output.table_text("A sweep", COLUMNS[:4], [r[:4] for r in ROWS], width=140)
    assert "┏" in text
    lines = [line for line in text.splitlines() if "start_hp=" in line]
    assert len(lines) == 3 and all("[48.4, 51.7]" in line for line in lines)


def test_too_many_columns_for_the_width_are_shown_a_block_a_row():
    """At 80 columns the eleven columns of a sweep do not fit even unboxed:
    each row is its name, then one ``column: value`` line a figure."""
    text = output.table_text("A sweep", COLUMNS, ROWS, width=80)
    assert "┏" not in text
    assert "start_hp: start_hp=18+high-defend-hand-then-absorb" in text
    assert "  seat 1 wins: 50.0% [48.4, 51.7]" in text
    assert "  verdict: not balanced:" in text


def test_the_word_check_finds_a_cut_word():
    """The check above can fail: Rich's own wrapping (``overflow="fold"``, what
    the tables used) cuts words at 120 columns."""
    import io

    from rich.console import Console
    from rich.table import Table

    t = Table()
    for c in COLUMNS:
        t.add_column(c, overflow="fold")
    for r in ROWS:
        t.add_row(*r)
    buf = io.StringIO()
    Console(file=buf, width=120).print(t)
    assert _cut_words(buf.getvalue(), COLUMNS, ROWS)


def test_a_table_is_literal_text():
    text = output.table_text("", ["name", "n"], [["[bold]x[/bold] [rules]", "1"]], width=80)
    assert "[bold]x[/bold] [rules]" in text


# ---------------------------------------------------------------- help texts


def _help(args: list[str]) -> str:
    from balance.cli.root import make_app

    res = CliRunner().invoke(make_app(), [*args, "--help"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", res.output).split())


def test_rich_markup_would_eat_a_bracketed_word():
    """Why the help texts are escaped: Typer reads them as Rich markup."""
    from rich.text import Text

    assert Text.from_markup("a variant file's [rules] table").plain == "a variant file's  table"


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["tosk", "rules"], "a variant file's [rules] table"),  # a command's docstring
        (["tosk", "simulate"], "paths to .toml files with a [rules] table"),  # an option's help
        (["tosk"], "a variant file's [rules] table"),  # the command list
        (["tosk", "sweep"], "key=LO..HI[:STEP]"),
    ],
)
def test_help_shows_bracketed_words(args, shown):
    assert shown in _help(args)


def test_a_table_too_wide_for_its_box_drops_the_box_before_its_rows():
    """A compare matrix (as `balance tosk compare -n 200` printed it): boxed at
    120 columns; at 88 without the box, one space between columns (it needs 86),
    each row still on one line; at 80 a block a row."""
    names = ["random", "aggressor", "turtle", "balanced", "economist", "healer", "adaptive"]
    cols = ["", *names, "mean win rate [95% CI]"]
    rows = [[n, *(["100.0±1.8"] * 7), "42.4% [39.6, 45.3]"] for n in names]
    assert "┏" in output.table_text("m", cols, rows, width=120)
    tight = output.table_text("m", cols, rows, width=88)
    assert "┏" not in tight and "─" in tight
    assert sum(" 100.0±1.8 100.0±1.8 " in line for line in tight.splitlines()) == 7
    _check(tight, 88, cols, rows)
    blocks = output.table_text("m", cols, rows, width=80)
    assert "\nrandom\n  random: 100.0±1.8\n" in blocks  # a nameless column: the name alone
    _check(blocks, 80, cols, rows)
