"""Game-agnostic numba kernels that merge per-game outcomes into exact counts."""

import numpy as np

from kernels.jit import njit


@njit
def card_counts(n_cards, seen_a, played_a, seen_b, played_b, a_points, out):
    """Add per-card counters of a batch to ``out`` (int64[2, n_cards, 9]).

    For each side (A = 0, B = 1) and card: games with the card seen in hand,
    and of those won and drawn; the same for played, and for not seen.
    ``a_points`` are A's half points per game (2 win, 1 draw, 0 loss).
    """
    for g in range(a_points.shape[0]):
        pts = a_points[g]
        for side in range(2):
            seen = seen_a[g] if side == 0 else seen_b[g]
            played = played_a[g] if side == 0 else played_b[g]
            win = 1 if pts == (2 if side == 0 else 0) else 0
            draw = 1 if pts == 1 else 0
            for c in range(n_cards):
                if (seen >> c) & 1:
                    k = 0
                else:
                    k = 6
                out[side, c, k] += 1
                out[side, c, k + 1] += win
                out[side, c, k + 2] += draw
                if (played >> c) & 1:
                    out[side, c, 3] += 1
                    out[side, c, 4] += win
                    out[side, c, 5] += draw


def pair_outcomes(winner, rounds, lead, maxdef0, maxdef1, notahead0, notahead1) -> dict:
    """The per-game outcome columns every engine returns, from its raw rows:
    ``winner_seat`` (-1 draw), ``a_seat`` (game 2d: A in seat 0, 2d+1: seat 1),
    ``a_points`` (A's half points: 2 win, 1 draw, 0 loss) and the score-trace
    metrics ``lead_changes``, ``max_deficit`` (the winner's largest deficit; -1
    for a draw) and ``decided_pct`` (share of the game, in whole percent, before
    the winner led for good; -1 for a draw)."""
    a_seat = np.arange(winner.shape[0]) % 2
    decided = winner != -1
    return {
        "winner_seat": winner,
        "a_seat": a_seat,
        "a_points": np.where(winner == -1, 1, np.where(winner == a_seat, 2, 0)),
        "lead_changes": lead,
        "max_deficit": np.where(decided, np.where(winner == 0, maxdef0, maxdef1), -1),
        "decided_pct": np.where(
            decided,
            (100 * np.where(winner == 0, notahead0, notahead1)) // np.maximum(rounds, 1),
            -1,
        ),
    }
