"""A fingerprint of what every engine plays: several variants and strategy
pairings of each game, 100 games each, hashed per run (every deal's pair
points, the seats' wins, the game lengths and the end reasons).

It guards refactors (issue 16: "games bit-identical before and after"): a
change to the engines, strategies, rules encoding or runner that alters any
game changes a hash here. An intended change of play (a rules fix, a new
engine version) regenerates the file with
``python -m tests.core.test_fingerprint`` and says so in its commit.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from tests import TESTS

DATA = TESTS / "data" / "fingerprint.json"
GAMES_N = 100
SEED = 20261201


def _runs() -> list[tuple[str, str, str, str]]:
    from balance.config import strategy_names, variant_names
    from balance.registry import GAMES

    out = []
    for game in GAMES:
        strategies = [s for s in strategy_names(game) if s != "random"][:3] + ["random"]
        variants = ["base"] + variant_names(game)[:2]
        pairs = [
            (strategies[i], strategies[j])
            for i in range(len(strategies))
            for j in range(i + 1, len(strategies))
        ] + [(strategies[0], strategies[0])]
        for v in variants:
            for a, b in pairs:
                out.append((game, v, a, b))
    return out


def _digest(res) -> str:
    h = hashlib.sha256()
    for part in (
        np.asarray([res.games, res.a_wins, res.b_wins, res.draws], dtype=np.int64),
        np.asarray(res.seat_wins, dtype=np.int64),
        np.asarray(res.pair_points, dtype=np.uint8),
        np.trim_zeros(np.asarray(res.rounds_hist, dtype=np.int64), "b"),
        np.asarray(res.reasons, dtype=np.int64),
    ):
        h.update(part.tobytes())
        h.update(b"|")
    return h.hexdigest()[:20]


def fingerprint() -> dict[str, str]:
    from balance.config import load_strategy, resolve_variant
    from balance.runner import RunSpec, run_many

    specs, keys = [], []
    for game, v, a, b in _runs():
        rs = resolve_variant(game, v)
        specs.append(RunSpec(rs, load_strategy(game, a), load_strategy(game, b), GAMES_N, SEED))
        keys.append(f"{game}/{v}/{a}-{b}")
    res = run_many(specs, store=None, threads=1, progress=False)
    return {k: _digest(r) for k, r in zip(keys, res, strict=False)}


@pytest.mark.slow
def test_every_game_plays_exactly_as_recorded():
    want = json.loads(DATA.read_text(encoding="utf-8"))
    got = fingerprint()
    assert sorted(got) == sorted(want["runs"]), "the set of fingerprinted runs changed"
    differ = [k for k in want["runs"] if got[k] != want["runs"][k]]
    assert not differ, f"{len(differ)} of {len(got)} runs play differently: {differ[:5]}"


if __name__ == "__main__":  # regenerate after an intended change of play
    from balance.registry import GAMES, get_game

    data = {
        "games": GAMES_N,
        "seed": SEED,
        "engines": {g: get_game(g).engine_module().VERSION for g in GAMES},
        "runs": fingerprint(),
    }
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(data['runs'])} runs written to {DATA}")
