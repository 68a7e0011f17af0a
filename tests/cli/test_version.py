"""``balance --version``: the toolkit's version, on one line, exit 0, before
any game is loaded."""

from __future__ import annotations

from typer.testing import CliRunner

from balance import __version__


def test_version_prints_the_version_and_exits():
    from balance.cli.root import make_app

    res = CliRunner().invoke(make_app(), ["--version"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == f"balance {__version__}"
