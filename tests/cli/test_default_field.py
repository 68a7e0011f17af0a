"""One default field (issue 45, item 1): ``compare``, ``sweep`` and ``repair``
play, when no strategies are named, exactly the strategies the study plays
(``configs/<game>/study.toml``), read from one place
(:func:`balance.config.default_field`); ``tune --vs field`` plays that field
without the tuned strategy it makes."""

from __future__ import annotations

import pytest
import typer

from balance import config
from balance.cli.game import _opponents, cli_defaults
from balance.cli.root import make_app
from balance.errors import UserError
from balance.registry import get_game

SHIPPED = ["tosk", "trisk", "clash", "suits"]


def _default(game: str, command: str, option: str):
    root = typer.main.get_command(make_app())
    cmd = root.commands[game].commands[command]
    (param,) = [p for p in cmd.params if option in p.opts]
    return param.default


@pytest.mark.parametrize("game", SHIPPED)
def test_compare_and_sweep_default_to_the_studys_field(game):
    field = [str(s) for s in config.load_study(game)["strategies"]]
    assert "tuned" in field  # the study's field has its tuned strategy
    assert config.default_field(game) == field
    assert cli_defaults(get_game(game))["strategies"] == field
    for command in ("compare", "sweep"):
        assert _default(game, command, "--strategies") == ",".join(field)


@pytest.mark.parametrize("game", SHIPPED)
def test_tune_vs_field_is_the_default_field_without_the_tuned_strategy(game):
    tuned = config.load_study(game)["tuned"]
    scripted = cli_defaults(get_game(game))["scripted"]
    assert scripted == [s for s in config.default_field(game) if s != tuned]
    assert tuned not in scripted and len(scripted) == len(config.default_field(game)) - 1
    names = [s.name.partition("@")[0] for s in _opponents(game, "field", scripted)]
    assert names == scripted  # (with their loadout or deck where the game has them)


def test_the_old_strategies_key_of_cli_toml_is_refused(tmp_path):
    from dataclasses import replace

    game = get_game("tosk")
    (tmp_path / "cli.toml").write_text('strategies = ["random"]\n', encoding="utf-8")
    with pytest.raises(UserError, match="strategies"):
        cli_defaults(replace(game, config_dir=tmp_path))
