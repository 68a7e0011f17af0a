"""The Creation phase's fast path against its reference.

``engine.scored_candidates`` (what ``play`` uses) must write the rows of
``engine.play_candidates`` in the same order with the same features, and the
same scores as ``strategies.trisk.score`` of each row, bit for bit: a choice
or a tie depends on them, and so does the noise stream. Compared on every
Creation-phase state of many recorded games (``sims.trisk.profiling._record``):
the reference set under the TOML strategies, and the toy set (Upgrades,
Rituals, mass Curses, coin gates, Ward, a card held twice) at several
temperatures and rule variants.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from balance import config
from sims.trisk import engine as E
from sims.trisk import profiling as P
from strategies.trisk import P_PLAY, score
from strategies.trisk.view import NPL
from tests.games.trisk.test_trisk_engine import GREEDY, TOY_DECK
from tests.games.trisk.trisk_helpers import rules_vector, side


@numba.njit
def _compare(rules, table, ws, forbs, dmax, rec, rec_u, meta):
    """(states compared, candidates compared, rows that differ)."""
    w1 = E._work(dmax, False)
    w2 = E._work(dmax, False)
    rngs, bd, pl, dk, hd = w1[0], w1[1], w1[2], w1[3], w1[4]
    cand, feats, scores, tg = w1[5], w1[6], w1[7], w1[9]
    cand2, feats2, scores2, tg2, sl, hr = w2[5], w2[6], w2[7], w2[9], w2[22], w2[23]
    states = 0
    rows = 0
    bad = 0
    for i in range(meta.shape[0]):
        if meta[i, 1] != 1:
            continue
        P._restore(rec, rec_u, meta, i, bd, pl, hd, dk, rngs)
        p = meta[i, 3]
        w = ws[meta[i, 4]]
        forb = forbs[meta[i, 4]]
        n = E.play_candidates(rules, table, bd, pl, hd, forb, p, cand, feats, tg)
        for k in range(n):
            scores[k] = score(w, P_PLAY, feats, k, NPL)
        n2 = E.scored_candidates(
            rules, table, bd, pl, hd, forb, p, cand2, feats2, tg2, sl, hr, w, scores2
        )
        states += 1
        if n != n2:
            bad += 1
            continue
        rows += n
        for k in range(n):
            same = scores[k] == scores2[k] or (np.isnan(scores[k]) and np.isnan(scores2[k]))
            for f in range(E.CW):
                same = same and cand[k, f] == cand2[k, f]
            for f in range(NPL):
                same = same and feats[k, f] == feats2[k, f]
            if not same:
                bad += 1
    return states, rows, bad


def _check(rules, va, vb, seed, deals):
    ints, table, sides, deck_n, primals, ws, forbs = E.prepare(rules, va, vb)
    rec, rec_u, meta, full = P._record(
        ints, table, sides, deck_n, primals, ws, forbs, np.uint64(seed), deals, 600 * deals
    )
    assert not full
    states, rows, bad = _compare(ints, table, ws, forbs, sides.shape[1], rec, rec_u, meta)
    assert states > 10 * deals and rows > states
    assert bad == 0, f"{bad} of {rows} candidate rows differ from the reference"
    return states


@pytest.mark.parametrize(
    "a,b", [("control", "control"), ("random", "random"), ("tempo", "rush"), ("ramp", "control")]
)
def test_reference_set_matches_the_reference_path(a, b):
    rules = config.resolve_variant("trisk", "base").vector()
    va = config.load_strategy("trisk", a).vector()
    vb = config.load_strategy("trisk", b).vector()
    _check(rules, va, vb, 3, 60)


@pytest.mark.parametrize("temp", [0.0, 0.5, 3.0])
@pytest.mark.parametrize("over", [{}, {"max_board": 2}, {"hand_limit": 3}, {"upgrade_cost": 0}])
def test_toy_set_matches_the_reference_path(temp, over):
    spec = dict(GREEDY, temperature=temp)
    a = side(spec, "Cern", TOY_DECK)
    b = side(spec, "Vask", TOY_DECK[::-1])
    _check(rules_vector(**over), a, b, 21, 30)
