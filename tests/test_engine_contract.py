"""The surface every engine in the registry exposes, checked for each game
(a game added to the registry gets these checks without a line here)."""

from __future__ import annotations

import pytest

from balance.registry import GAMES

SURFACE = (
    "GAME",
    "VERSION",
    "RULE_FIELDS",
    "DEFAULT_RULES",
    "RULE_LIMITS",
    "END_NAMES",
    "encode_rules",
    "simulate",
    "trace",
    "catalogue",
    "max_length",
)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_engine_exposes_the_contract(game):
    eng = GAMES[game].engine_module()
    missing = [name for name in SURFACE if not hasattr(eng, name)]
    assert not missing, f"{game}'s engine lacks {missing}"
    assert eng.GAME == game
    assert set(eng.DEFAULT_RULES) <= set(eng.RULE_FIELDS) | {"card_set"}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_game_length_histogram_is_as_wide_as_the_longest_game(game):
    """``max_length(rules)`` sizes the runner's histogram (it used to guess
    ``max_rounds`` or 1,000, so Trisk, whose cap is ``max_turns``, got 1,002
    bins); no game of a run is longer."""
    from balance.config import load_strategy, resolve_variant, strategy_names
    from balance.runner import RunSpec, run_many

    rs = resolve_variant(game, "base")
    eng = GAMES[game].engine_module()
    cap = eng.max_length(rs.rules)
    assert 0 < cap < 10_000
    names = [s for s in strategy_names(game) if s != "random"][:2]
    spec = RunSpec(rs, load_strategy(game, names[0]), load_strategy(game, names[-1]), 40, 3)
    (res,) = run_many([spec], store=None, threads=1, progress=False)
    assert len(res.rounds_hist) == cap + 2
    assert res.rounds_hist.sum() == res.games
    assert res.rounds_hist[cap + 1 :].sum() == 0  # no game longer than the cap
