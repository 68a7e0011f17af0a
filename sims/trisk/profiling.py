"""Where a Trisk game's time goes: ``profile`` (called by ``balance bench``).

Method (record, then replay each hot kernel alone):

Every time is the process's CPU time (``time.process_time``, so other
programs on a busy machine do not inflate it), the best of ``repeats``;
the replay's stages are timed in turn, round after round, so that a slow
spell of the machine does not land on one stage only.

1. ``total``: the games ``0 .. n_games`` of ``seed`` are played by the
   engine's own kernel (``engine._simulate``) on one thread, divided by
   ``n_games``.
2. The same games are played once more, serially, with every decision of the
   Primal and Creation phases recorded (``engine.snapshot``: the board, the
   counters, the hands, the decks and the random streams just before the
   decision, and the choice made).
3. Each recorded decision is replayed through the kernels under test,
   cumulatively: stage 0 only restores the state into work arrays; a Creation
   step's stage 1 adds the candidates (``creation_phase`` with ``probe``: their
   enumeration, features and scores, computed in one pass; as in the game, a
   seat's first step of a game computes every row and a later step keeps the
   scores of the ability rows whose inputs its change detection finds unchanged
   since they were computed, the recorded steps being replayed in order), stage 2 the
   choice (``pick``), stage 3 carrying it out (``do_play``); a Primal action's stage 1 adds its candidates, scoring and
   choice; the start of a Combat phase's stage 1 adds the combat (attackers,
   Fear flips, blocks, the Damage step) and stage 2 the end of the turn
   (``end_of_turn`` and the invariant checks). Each stage is timed over one
   pass through every recorded decision; a part is the difference of consecutive stages (so the
   restoring is not counted), divided by ``n_games``. The replay checks that
   every decision picks what the game picked and every replayed turn keeps
   the invariants (else it raises). ``deal``: ``start_game`` of every game
   (seeding the streams, shuffling), timed alone.
4. ``rest`` = ``total`` minus the parts: the Creation phase's other
   bookkeeping (``create_refused``), the score trace, the loops, and what
   replaying out of the game's flow times differently (caches, branches).

Returns seconds per game: ``deal``, ``primal``, ``candidates``, ``pick``,
``apply``, ``combat``, ``end_of_turn``, ``rest`` and ``total`` (the parts and
``rest`` sum to ``total``). A part that timer
noise makes negative is reported as 0; should the parts exceed the measured
total, ``rest`` is 0 and ``total`` their sum.
"""

from __future__ import annotations

import time

import numpy as np

from kernels.jit import leaf, n_chunks_of, njit
from sims.trisk import engine as E
from strategies.trisk import P_PRIMAL, P_TEMP, pick, score
from strategies.trisk.view import NPR

_INTS_PER_DECISION = 600  # a generous mean size of one recorded state


@njit
def _record(rules, table, sides, deck_n, primals, ws, forbs, seed, n_deals, cap):
    """Play deals ``0 .. n_deals`` serially, recording every decision."""
    (
        rngs,
        bd,
        pl,
        dk,
        hd,
        cand,
        feats,
        scores,
        slots,
        tg,
        atk,
        blk,
        fear_ok,
        used,
        trk,
        log,
        ints,
        res,
        rec,
        rec_u,
        rec_meta,
        rec_n,
        hr,
        inc,
        cs,
        ct,
    ) = E._work(sides.shape[1], False)
    rec = np.zeros(cap * _INTS_PER_DECISION, np.int64)
    rec_u = np.zeros((cap, 6, 4), np.uint64)
    rec_meta = np.zeros((cap, 8), np.int64)
    for g in range(2 * n_deals):
        E.start_game(sides, deck_n, primals, seed, g // 2, g % 2, rngs, bd, pl, dk, hd)
        E.play(
            rules,
            table,
            ws,
            forbs,
            g % 2,
            rngs,
            bd,
            pl,
            dk,
            hd,
            cand,
            feats,
            scores,
            slots,
            tg,
            atk,
            blk,
            fear_ok,
            used,
            trk,
            log,
            ints,
            False,
            res,
            rec,
            rec_u,
            rec_meta,
            rec_n,
            hr,
            inc,
            cs,
            ct,
        )
    return rec, rec_u, rec_meta[: rec_n[0]].copy(), rec_n[2] == 1


@leaf
def _restore(rec, rec_u, rec_meta, i, bd, pl, hd, dk, rngs):
    """Write recorded decision ``i`` back into the work arrays."""
    o = rec_meta[i, 0]
    for q in range(2):
        for s in range(rec_meta[i, 6 + q]):
            for f in range(E.BF):
                bd[q, s, f] = rec[o]
                o += 1
    for q in range(2):
        for f in range(E.KW):
            pl[q, f] = rec[o]
            o += 1
        for h in range(E.MAX_HAND):
            hd[q, h] = rec[o]
            o += 1
        for j in range(dk.shape[1]):
            dk[q, j] = rec[o]
            o += 1
    for r in range(6):
        for j in range(4):
            rngs[r, j] = rec_u[i, r, j]


@njit
def _replay(rules, table, ws, forbs, dmax, rec, rec_u, rec_meta, kind, stage):
    """Replay every recorded decision of ``kind`` up to ``stage`` (see the
    module docstring); returns how many chose otherwise than the game did
    (counted from stage 2 of a Creation step, stage 1 of a Primal action)
    plus the replayed turns that broke an invariant."""
    (
        rngs,
        bd,
        pl,
        dk,
        hd,
        cand,
        feats,
        scores,
        slots,
        tg,
        atk,
        blk,
        fear_ok,
        used,
        trk,
        log,
        ints,
        res,
        _rec,
        _rec_u,
        _rec_meta,
        _rec_n,
        hr,
        inc,
        cs,
        ct,
    ) = E._work(dmax, False)
    wrong = 0
    for i in range(rec_meta.shape[0]):
        if rec_meta[i, 1] != kind:
            continue
        _restore(rec, rec_u, rec_meta, i, bd, pl, hd, dk, rngs)
        if stage == 0:
            continue
        p = rec_meta[i, 3]
        side = rec_meta[i, 4]
        w = ws[side]
        forb = forbs[side]
        noise = rngs[4 + side]
        if kind == 2:
            q = 1 - p
            na = E.attackers(
                rules, table, bd, pl, w, p, noise, atk, blk, feats, log, ints, False, 0
            )
            fell = 0
            if na > 0:
                E.fear_flips(bd, pl, q, rngs, fear_ok, log, ints, False, 0)
                E.blocks(
                    rules,
                    table,
                    bd,
                    pl,
                    ws[1 - side],
                    p,
                    atk,
                    blk,
                    na,
                    fear_ok,
                    feats,
                    scores,
                    slots,
                    rngs[5 - side],
                    used,
                    log,
                    ints,
                    False,
                    0,
                )
                fell = E.damage_step(
                    rules, table, bd, pl, p, atk, blk, na, rngs, log, ints, False, 0
                )
            if stage == 2 and not fell:
                E.end_of_turn(table, bd, pl, p, log, ints, False, 0)
                wrong += 1 - (
                    E.check_invariants(rules, table, bd, pl, 0)
                    & E.check_invariants(rules, table, bd, pl, 1)
                )
            continue
        if kind == 0:
            n = E.primal_candidates(rules, table, bd, pl, hd, forb, p, feats)
            for k in range(n):
                scores[k] = score(w, P_PRIMAL, feats, k, NPR)
            if pick(scores, n, w[P_TEMP], noise) != rec_meta[i, 2]:
                wrong += 1
            continue
        # as in the game: a seat's first Creation step of a game computes every
        # row, a later one keeps the scores of unchanged ability rows (the seat's
        # previous step was replayed just before it of the seat's steps)
        fresh = (i == 0 or rec_meta[i - 1, 1] != 1) and rec_meta[i, 5] <= 2
        n = E.creation_phase(
            rules,
            table,
            bd,
            pl,
            dk,
            hd,
            forb,
            p,
            side,
            w,
            noise,
            rngs,
            cand,
            feats,
            scores,
            tg,
            hr,
            inc[p],
            cs[p],
            ct[p],
            log,
            ints,
            False,
            rec_meta[i, 5],
            _rec,
            _rec_u,
            _rec_meta,
            _rec_n,
            1 if fresh else 0,
        )
        if stage == 1:
            continue
        k = pick(scores, n, w[P_TEMP], noise)
        if k != rec_meta[i, 2]:
            wrong += 1
        if stage == 2 or k == 0:
            continue
        E.do_play(rules, table, bd, pl, dk, hd, p, cand, k, rngs, log, ints, False, rec_meta[i, 5])
    return wrong


@njit
def _deal(sides, deck_n, primals, seed, n_deals):
    """Set up (``start_game``) the games of deals ``0 .. n_deals``."""
    (
        rngs,
        bd,
        pl,
        dk,
        hd,
        cand,
        feats,
        scores,
        slots,
        tg,
        atk,
        blk,
        fear_ok,
        used,
        trk,
        log,
        ints,
        res,
        rec,
        rec_u,
        rec_meta,
        rec_n,
        hr,
        inc,
        cs,
        ct,
    ) = E._work(sides.shape[1], False)
    tot = 0
    for g in range(2 * n_deals):
        E.start_game(sides, deck_n, primals, seed, g // 2, g % 2, rngs, bd, pl, dk, hd)
        tot += dk[0, 0]
    return tot


def _best(fn, repeats):
    best = float("inf")
    out = None
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def profile(rules, strat_a, strat_b, seed, n_games, repeats=5) -> dict[str, float]:
    """Seconds per game spent in each part of a Trisk game, and ``total``
    (the method: the module docstring). ``rules`` and the strategies are
    vectors as ``engine.simulate`` takes them; ``n_games`` is even."""
    if n_games <= 0 or n_games % 2:
        raise ValueError("n_games must be even and positive (seat-swapped pairs)")
    ints, table, sides, deck_n, primals, ws, forbs = E.prepare(rules, strat_a, strat_b)
    seed = np.uint64(seed)
    n_deals = n_games // 2
    out = np.zeros((n_games, E.N_RESULT), np.int64)
    # every chunk in this thread: the kernel itself, not the threads around it
    args = (0, n_chunks_of(n_games, E.CHUNK))
    args += (ints, table, sides, deck_n, primals, ws, forbs, seed, 0, n_deals, out)
    E._simulate.kernel(*args)  # compiled before it is timed
    total, _ = _best(lambda: E._simulate.kernel(*args), repeats)
    cap = 400 * n_games
    while True:
        rec, rec_u, meta, full = _record(
            ints, table, sides, deck_n, primals, ws, forbs, seed, n_deals, cap
        )
        if not full:
            break
        cap *= 2
    dmax = sides.shape[1]

    stages = [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (2, 1), (2, 2)]
    _replay(ints, table, ws, forbs, dmax, rec, rec_u, meta, 0, 0)  # compile
    best = dict.fromkeys(stages, float("inf"))
    # the stages in turn, ``repeats`` times: a slow spell of the machine hits
    # every stage alike, not the one it falls in (a part is a difference of
    # two stages, so one slow stage would move two parts)
    for _ in range(repeats):
        for kind, k in stages:
            t = time.process_time()
            wrong = _replay(ints, table, ws, forbs, dmax, rec, rec_u, meta, kind, k)
            t = time.process_time() - t
            if wrong:
                raise RuntimeError(f"{wrong} replayed decisions differ from the game's")
            best[kind, k] = min(best[kind, k], t)
    p0, p1, c0, c1, c2, c3, b0, b1, b2 = (best[st] for st in stages)
    _deal(sides, deck_n, primals, seed, 1)
    deal, _ = _best(lambda: _deal(sides, deck_n, primals, seed, n_deals), repeats)
    parts = {
        "deal": deal,
        "primal": max(p1 - p0, 0.0),
        "candidates": max(c1 - c0, 0.0),
        "pick": max(c2 - c1, 0.0),
        "apply": max(c3 - c2, 0.0),
        "combat": max(b1 - b0, 0.0),
        "end_of_turn": max(b2 - b1, 0.0),
    }
    res = {k: v / n_games for k, v in parts.items()}
    res["rest"] = max(total / n_games - sum(res.values()), 0.0)
    res["total"] = sum(res.values())  # the measured total, unless the parts exceed it
    return res
