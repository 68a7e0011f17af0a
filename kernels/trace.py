"""Score-trace bookkeeping shared by every engine (lead changes, largest
deficit, the last round a seat was not ahead)."""

from kernels.jit import njit


@njit(inline="always")
def track_score(hp, rnd1, lead, max_def, not_ahead):
    """Score-trace bookkeeping at the end of round ``rnd1`` (1-based).

    ``lead`` is [leader seat (-1 before anyone led), lead changes]; a tied
    round keeps the leader. ``max_def[s]`` is seat s's largest deficit so far
    (at least 0), ``not_ahead[s]`` the last round at whose end seat s was not
    strictly ahead (0 while it has been ahead at every round end).
    """
    d = hp[0] - hp[1]
    new = lead[0]
    if d > 0:
        new = 0
    elif d < 0:
        new = 1
    if lead[0] >= 0 and new != lead[0]:
        lead[1] += 1
    lead[0] = new
    if -d > max_def[0]:
        max_def[0] = -d
    if d > max_def[1]:
        max_def[1] = d
    if d <= 0:
        not_ahead[0] = rnd1
    if d >= 0:
        not_ahead[1] = rnd1
