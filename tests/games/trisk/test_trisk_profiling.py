"""``sims.trisk.profiling``: where a game's time goes (parts and total, seconds per game).

Times are never asserted; only the structure: every part is non-negative, the
hot ones take time, and the parts add up to the total. ``profile`` itself
raises when a replayed decision chooses otherwise than the recorded game did.
"""

from __future__ import annotations

import math

import pytest

from balance import config
from sims.trisk import profiling as P

PARTS = ("deal", "primal", "candidates", "pick", "apply", "combat", "end_of_turn", "rest")


@pytest.mark.parametrize("a,b", [("control", "control"), ("random", "rush")])
@pytest.mark.slow
def test_parts_are_positive_and_sum_to_the_total(a, b):
    rules = config.resolve_variant("trisk", "base").vector()
    va = config.load_strategy("trisk", a).vector()
    vb = config.load_strategy("trisk", b).vector()
    res = P.profile(rules, va, vb, 11, 40, repeats=1)
    assert sorted(res) == sorted((*PARTS, "total"))
    assert all(res[k] >= 0.0 for k in PARTS)
    for k in ("candidates", "combat", "total"):
        assert res[k] > 0.0, k
    assert math.isclose(sum(res[k] for k in PARTS), res["total"], rel_tol=1e-9)


def test_odd_game_counts_are_refused():
    rules = config.resolve_variant("trisk", "base").vector()
    v = config.load_strategy("trisk", "control").vector()
    with pytest.raises(ValueError):
        P.profile(rules, v, v, 1, 3)
