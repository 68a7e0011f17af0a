"""The Creation phase's fast path against its reference.

A step of ``engine.creation_phase`` (what ``play`` uses; called here with
``probe``, to list and score one state's rows) must write the rows of
``engine.play_candidates`` in the same order, and the same scores as
``strategies.trisk.score`` of each row, bit for bit: a choice or a tie depends
on them, and so does the noise stream. Called ``fresh`` (every row computed)
it must also write the same features. Called incrementally (an ability row
computed at an earlier call, nothing it reads changed since, keeps its score,
even across calls that did not list it) it is
compared in the game's own sequence of steps (each seat's first step of a
game fresh, the later ones incremental, across the other seat's turns) and on sequences of random changes
to recorded states (damage, tokens, levels, Used flags, destroyed creations,
creations joining, cards drawn or played, creations swapped): the rows, the scores and the
choice (``pick``, with its noise draw) must match, and rows must be kept.
Compared on every Creation-phase state of many recorded games
(``sims.trisk.profiling._record``): the reference set under the TOML
strategies, and the toy set (Upgrades, Rituals, mass Curses, coin gates,
Ward, a card held twice) at several temperatures and rule variants.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from balance import config
from sims.trisk import engine as E
from sims.trisk import profiling as P
from strategies.trisk import P_PLAY, P_TEMP, pick, score
from strategies.trisk.view import NPL
from tests.games.trisk.test_trisk_engine import GREEDY, TOY_DECK
from tests.games.trisk.trisk_helpers import rules_vector, side


@numba.njit(cache=True)
def _scored(rules, table, bd, pl, hd, forb, p, step, w, w2, inc, cs, ct, fresh):
    """One step's rows and scores by ``creation_phase`` (``probe``): into ``w2``'s
    ``cand``, ``feats``, ``scores``, with its ``tg`` and ``hr`` as work
    arrays; its other arrays stand in for those a probe does not touch.
    ``step`` is the recorded step's row of ``meta``: its side and turn only
    label a recording, which a probe makes none of; passed as values, not
    constants, they give ``creation_phase`` the types the profiler's replay
    (``sims.trisk.profiling``) calls it with, so that one compile of it
    serves both (about 20 s each on an empty cache)."""
    return E.creation_phase(
        rules,
        table,
        bd,
        pl,
        w2[3],
        hd,
        forb,
        p,
        step[4],
        w,
        w2[0][4],
        w2[0],
        w2[5],
        w2[6],
        w2[7],
        w2[9],
        w2[22],
        inc,
        cs,
        ct,
        w2[15],
        w2[16],
        False,
        step[5],
        w2[18],
        w2[19],
        w2[20],
        w2[21],
        1 if fresh else 0,
    )


@numba.njit(cache=True)
def _compare(rules, table, ws, forbs, dmax, rec, rec_u, meta):
    """(states compared, candidates compared, rows that differ)."""
    w1 = E._work(dmax, False)
    w2 = E._work(dmax, False)
    rngs, bd, pl, dk, hd = w1[0], w1[1], w1[2], w1[3], w1[4]
    cand, feats, scores, tg = w1[5], w1[6], w1[7], w1[9]
    cand2, feats2, scores2 = w2[5], w2[6], w2[7]
    inc, cs, ct = w2[23][0], w2[24][0], w2[25][0]
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
        n = _reference(rules, table, bd, pl, hd, forb, p, cand, feats, tg, w, scores)
        n2 = _scored(rules, table, bd, pl, hd, forb, p, meta[i], w, w2, inc, cs, ct, True)
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


@numba.njit(cache=True)
def _same_rows(n, cand, scores, n2, cand2, scores2):
    """Rows of the two lists that differ (their kind, card, slots, targets or score)."""
    if n != n2:
        return max(n, n2)
    bad = 0
    for k in range(n):
        same = scores[k] == scores2[k] or (np.isnan(scores[k]) and np.isnan(scores2[k]))
        for f in range(E.CW):
            same = same and cand[k, f] == cand2[k, f]
        if not same:
            bad += 1
    return bad


@numba.njit(cache=True)
def _kept(n, feats2):
    """Rows whose features were not written (``feats2`` was filled with NaN)."""
    k = 0
    for j in range(n):
        if np.isnan(feats2[j, 0]):
            k += 1
    return k


@numba.njit(cache=True)
def _reference(rules, table, bd, pl, hd, forb, p, cand, feats, tg, w, scores):
    n = E.play_candidates(rules, table, bd, pl, hd, forb, p, cand, feats, tg)
    for k in range(n):
        scores[k] = score(w, P_PLAY, feats, k, NPL)
    return n


@numba.njit(cache=True)
def _compare_steps(rules, table, ws, forbs, dmax, rec, rec_u, meta):
    """The recorded Creation steps in the game's order, each seat with its own
    state, its first step of a game fresh, the later ones incremental: (rows
    compared, rows kept, rows or choices that differ). Both sides pick from copies of the same noise stream."""
    w1 = E._work(dmax, False)
    w2 = E._work(dmax, False)
    rngs, bd, pl, dk, hd = w1[0], w1[1], w1[2], w1[3], w1[4]
    cand, feats, scores, tg = w1[5], w1[6], w1[7], w1[9]
    cand2, feats2, scores2 = w2[5], w2[6], w2[7]
    inc, cs, ct = w2[23], w2[24], w2[25]
    noise2 = np.zeros(4, np.uint64)
    rows = 0
    kept = 0
    bad = 0
    for i in range(meta.shape[0]):
        if meta[i, 1] != 1:
            continue
        P._restore(rec, rec_u, meta, i, bd, pl, hd, dk, rngs)
        p = meta[i, 3]
        w = ws[meta[i, 4]]
        forb = forbs[meta[i, 4]]
        noise = rngs[4 + meta[i, 4]]
        noise2[:] = noise
        fresh = (i == 0 or meta[i - 1, 1] != 1) and meta[i, 5] <= 2
        n = _reference(rules, table, bd, pl, hd, forb, p, cand, feats, tg, w, scores)
        feats2[:, 0] = np.nan
        n2 = _scored(rules, table, bd, pl, hd, forb, p, meta[i], w, w2, inc[p], cs[p], ct[p], fresh)
        kept += _kept(n2, feats2)
        rows += n
        bad += _same_rows(n, cand, scores, n2, cand2, scores2)
        k = pick(scores, n, w[P_TEMP], noise)
        k2 = pick(scores2, n2, w[P_TEMP], noise2)
        if k != k2 or k != meta[i, 2]:
            bad += 1
        for j in range(4):
            if noise[j] != noise2[j]:
                bad += 1
    return rows, kept, bad


@numba.njit(cache=True)
def _mutate(rules, bd, pl, dk, hd, p, r):
    """One random change of the state (``r`` a numpy random draw in [0, 1))."""
    q = int(r * 1e6) % 2
    nb = pl[q, E.K_NB]
    s = int(r * 1e8) % nb
    c = int(r * 1e4) % 12
    if c == 0:
        bd[q, s, E.F_DMG] += 1
    elif c == 1:
        bd[q, s, E.F_TOK + int(r * 1e9) % E.N_STATUS] += 1
    elif c == 2:
        bd[q, s, E.F_TOK + int(r * 1e9) % E.N_STATUS] = 0
    elif c == 3:
        bd[q, s, E.F_LEVEL] = min(E.MAX_LEVEL, bd[q, s, E.F_LEVEL] + 1)
    elif c == 4:
        bd[q, s, E.F_LEVEL] = max(0, bd[q, s, E.F_LEVEL] - 1)
    elif c == 5 and s > 0:
        bd[q, s, E.F_USED] = 1 - bd[q, s, E.F_USED]
    elif c == 6 and s > 0:
        E.destroy(bd, pl, q, s)
    elif c == 7:
        E.draw(rules, pl, dk, hd, q)
    elif c == 8 and pl[p, E.K_HANDN] > 0:
        E.remove_from_hand(pl, hd, p, int(r * 1e9) % pl[p, E.K_HANDN])
    elif c == 10 and nb < E.MAX_SLOTS:  # a creation joins: group counts (Pack, gates) change
        for f in range(E.BF):
            bd[q, nb, f] = bd[q, max(s, 1), f] if nb > 1 else 0
        bd[q, nb, E.F_STACK] = 1
        if nb == 1:
            bd[q, nb, E.F_CARD] = bd[1 - q, 1, E.F_CARD] if pl[1 - q, E.K_NB] > 1 else 0
        pl[q, E.K_NB] = nb + 1
    elif c == 11 and nb > 1:  # the last creation leaves: no other slot moves
        E.destroy(bd, pl, q, nb - 1)
    elif c == 9 and nb > 2:
        t = 1 + int(r * 1e9) % (nb - 1)
        card = bd[q, s if s > 0 else 1, E.F_CARD]
        bd[q, s if s > 0 else 1, E.F_CARD] = bd[q, t, E.F_CARD]
        bd[q, t, E.F_CARD] = card


@numba.njit(cache=True)
def _compare_mutated(rules, table, ws, forbs, dmax, rec, rec_u, meta, seed, rounds):
    """From every 3rd recorded Creation state, ``rounds`` incremental calls with
    0 to 3 random changes between them: (rows compared, rows kept, rows that differ)."""
    np.random.seed(seed)
    w1 = E._work(dmax, False)
    w2 = E._work(dmax, False)
    rngs, bd, pl, dk, hd = w1[0], w1[1], w1[2], w1[3], w1[4]
    cand, feats, scores, tg = w1[5], w1[6], w1[7], w1[9]
    cand2, feats2, scores2 = w2[5], w2[6], w2[7]
    inc, cs, ct = w2[23], w2[24], w2[25]
    rows = 0
    kept = 0
    bad = 0
    inc, cs, ct = inc[0], cs[0], ct[0]
    for i in range(0, meta.shape[0], 3):
        if meta[i, 1] != 1:
            continue
        P._restore(rec, rec_u, meta, i, bd, pl, hd, dk, rngs)
        p = meta[i, 3]
        w = ws[meta[i, 4]]
        forb = forbs[meta[i, 4]]
        for rnd in range(rounds):
            if rnd > 0:
                for _ in range(np.random.randint(0, 4)):
                    _mutate(rules, bd, pl, dk, hd, p, np.random.random())
            n = _reference(rules, table, bd, pl, hd, forb, p, cand, feats, tg, w, scores)
            feats2[:, 0] = np.nan
            n2 = _scored(rules, table, bd, pl, hd, forb, p, meta[i], w, w2, inc, cs, ct, rnd == 0)
            kept += _kept(n2, feats2)
            rows += n
            bad += _same_rows(n, cand, scores, n2, cand2, scores2)
    return rows, kept, bad


def _check(rules, va, vb, seed, deals):
    ints, table, sides, deck_n, primals, ws, forbs = E.prepare(rules, va, vb)
    rec, rec_u, meta, full = P._record(
        ints, table, sides, deck_n, primals, ws, forbs, np.uint64(seed), deals, 600 * deals
    )
    assert not full
    states, rows, bad = _compare(ints, table, ws, forbs, sides.shape[1], rec, rec_u, meta)
    assert states > 10 * deals and rows > states
    assert bad == 0, f"{bad} of {rows} candidate rows differ from the reference"
    rows, kept, bad = _compare_steps(ints, table, ws, forbs, sides.shape[1], rec, rec_u, meta)
    assert bad == 0, f"{bad} of {rows} rows or choices of the incremental path differ"
    assert kept > 0, "the incremental path kept no row: the test would prove nothing"
    rows, kept, bad = _compare_mutated(
        ints, table, ws, forbs, sides.shape[1], rec, rec_u, meta, seed, 6
    )
    assert bad == 0, f"{bad} of {rows} rows of the incremental path differ after random changes"
    assert 0 < kept < rows
    return states


@pytest.mark.parametrize(
    "a,b", [("control", "control"), ("random", "random"), ("tempo", "rush"), ("ramp", "control")]
)
@pytest.mark.slow
def test_reference_set_matches_the_reference_path(a, b):
    rules = config.resolve_variant("trisk", "base").vector()
    va = config.load_strategy("trisk", a).vector()
    vb = config.load_strategy("trisk", b).vector()
    _check(rules, va, vb, 3, 60)


@pytest.mark.slow
@pytest.mark.parametrize("temp", [0.0, 0.5, 3.0])
@pytest.mark.parametrize("over", [{}, {"max_board": 2}, {"hand_limit": 3}, {"upgrade_cost": 0}])
def test_toy_set_matches_the_reference_path(temp, over):
    # target_ap weighted: a Pack bonus that changes with no change to the slot itself
    # (a creation of its group joins or leaves) then changes scores
    spec = dict(GREEDY, play=dict(GREEDY["play"], target_ap=0.3), temperature=temp)
    a = side(spec, "Cern", TOY_DECK)
    b = side(spec, "Vask", TOY_DECK[::-1])
    _check(rules_vector(**over), a, b, 21, 30)


@numba.njit(cache=True)
def _dense(w, base, feats, k, nf):
    """``score`` as first written: every column, a zero feature adding +0.0."""
    s = 0.0
    for f in range(nf):
        x = feats[k, f]
        s += w[base + f] * x if x != 0.0 else 0.0
    return s


@numba.njit(cache=True)
def _both(w, base, feats, nf):
    out = np.empty((feats.shape[0], 2))
    for k in range(feats.shape[0]):
        out[k, 0] = score(w, base, feats, k, nf)
        out[k, 1] = _dense(w, base, feats, k, nf)
    return out


@pytest.mark.slow  # measured over 1 s in the fast tier
def test_score_skips_zero_features_bit_for_bit():
    """``score`` adds only a row's nonzero features (one addition per set bit
    of a mask): the same sum, bit for bit, as adding every column with +0.0
    for a zero feature, on sparse rows and on signed zeros, infinities and NaN
    in weights and features (NaN for NaN), up to the 64 columns the mask holds."""
    g = np.random.default_rng(11)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e308])
    for nf in (1, NPL, 64):
        feats = g.normal(size=(4000, nf)) * 10.0 ** g.integers(-3, 4, (4000, nf))
        feats[g.random((4000, nf)) < 0.8] = 0.0  # sparse rows, as a play's are
        feats[:200] = g.choice(special, (200, nf))
        feats[200:400] = g.choice([0.0, -0.0, 1.0, -1.0], (200, nf))  # cancellations to zero
        w = np.concatenate([[np.nan, 7.0], g.normal(size=nf) * 10.0 ** g.integers(-3, 4, nf)])
        w[2] = -0.0
        ws = w.copy()
        ws[2 + g.integers(0, nf, max(1, nf // 4))] = g.choice(special, max(1, nf // 4))
        wi = g.choice([1.0, -1.0, 0.0, -0.0], nf + 2)  # sums that cancel to zero
        for weights in (w, ws, wi):
            got = _both(weights, 2, feats, nf)
            nan = np.isnan(got)
            assert (nan[:, 0] == nan[:, 1]).all()  # a NaN's sign bit is the hardware's choice
            assert got[~nan[:, 0], 0].tobytes() == got[~nan[:, 0], 1].tobytes()
        got = _both(w, 2, feats, nf)
        assert np.isfinite(got[400:, 0]).all()  # finite rows and weights: every sum compared
        got = _both(wi, 2, feats, nf)
        assert (got[200:400, 0] == 0.0).sum() >= 10  # and zero sums among them


@numba.njit(cache=True)
def _reads_missed(rules, table, rec, rec_u, meta, dmax, effects):
    """For every 5th recorded Creation state, every card in play as the target of
    every (effect, param) of ``effects`` from either seat: change each field its
    group (``E._target_group``) does not read, in turn; count the changes that
    moved a feature (each should be 0), and the (state, target, effect) cases."""
    w1 = E._work(dmax, False)
    rngs, bd, pl, dk, hd, feats = w1[0], w1[1], w1[2], w1[3], w1[4], w1[6]
    sl = np.zeros((2, E.MAX_SLOTS + 1, E.INCW), np.int64)  # what slot_table fills
    missed = 0
    cases = 0
    for i in range(0, meta.shape[0], 5):
        if meta[i, 1] != 1:
            continue
        P._restore(rec, rec_u, meta, i, bd, pl, hd, dk, rngs)
        for tp in range(2):
            for ts in range(pl[tp, E.K_NB]):
                for e in range(effects.shape[0]):
                    eff, param, n = effects[e, 0], effects[e, 1], effects[e, 2]
                    for p in range(2):
                        reads = E.G_READS[E._target_group(eff, param, tp != p)]
                        E.slot_table(table, bd, pl, sl)
                        E._clear(feats, 0, NPL)
                        E.effect_features_sl(
                            rules, table, bd, pl, sl, p, eff, n, param, tp, ts, 0.75, feats, 0
                        )
                        cases += 1
                        for bit in range(E.BF + 1):
                            if reads & (1 << bit):
                                continue
                            for v in range(3):  # +1, set to 0, set to 1
                                if bit == E.BF:
                                    old = sl[tp, ts, E.SL_AP]
                                    sl[tp, ts, E.SL_AP] = old + 1 if v == 0 else v - 1
                                else:
                                    old = bd[tp, ts, bit]
                                    bd[tp, ts, bit] = old + 1 if v == 0 else v - 1
                                E._clear(feats, 1, NPL)
                                E.effect_features_sl(
                                    rules,
                                    table,
                                    bd,
                                    pl,
                                    sl,
                                    p,
                                    eff,
                                    n,
                                    param,
                                    tp,
                                    ts,
                                    0.75,
                                    feats,
                                    1,
                                )
                                for f in range(NPL):
                                    if feats[0, f] != feats[1, f]:
                                        missed += 1
                                        break
                                if bit == E.BF:
                                    sl[tp, ts, E.SL_AP] = old
                                else:
                                    bd[tp, ts, bit] = old
    return missed, cases


@pytest.mark.slow
def test_a_rows_declared_reads_cover_what_its_features_read():
    """Incremental scoring keeps a row while nothing in its target's group of
    fields changed (``E.G_READS``, by ``E._target_group``): every other field of
    the target, and its attack power, changed alone must leave the features as
    they were, for every effect and status (Flying on an own card reads Used and
    Asleep through "can it attack"), on an enemy's card and an own one."""
    rules = config.resolve_variant("trisk", "base").vector()
    va = config.load_strategy("trisk", "control").vector()
    vb = config.load_strategy("trisk", "tempo").vector()
    ints, table, sides, deck_n, primals, ws, forbs = E.prepare(rules, va, vb)
    rec, rec_u, meta, full = P._record(
        ints, table, sides, deck_n, primals, ws, forbs, np.uint64(5), 20, 12_000
    )
    assert not full
    effects = [(E.E_STATUS, st, 2) for st in range(E.N_STATUS)]
    effects += [(E.E_HEAL, -1, 2), (E.E_CLEANSE, -1, 2), (E.E_LEVEL, -1, 2)]
    effects += [(E.E_DAMAGE, t, 3) for t in range(5)]
    missed, cases = _reads_missed(
        ints, table, rec, rec_u, meta, sides.shape[1], np.array(effects, np.int64)
    )
    assert cases > 1000
    assert missed == 0, f"{missed} changes to a field outside a row's reads moved its features"
