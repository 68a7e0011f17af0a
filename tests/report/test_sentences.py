"""Generated sentences read as a person would write them (issue 45's
glitches): one ruleset gives one length figure, not "12.2 rounds under base
and 12.2 under base"."""

from __future__ import annotations

import pandas as pd

from balance import verdicts


def metrics(rows):
    cols = ["variant", "duration", "duration_lo", "duration_hi", "games", "draw_rate", "draw_lo"]
    cols += ["draw_hi", "timeouts", "seat_advantage", "seat_adv_lo", "seat_adv_hi"]
    df = pd.DataFrame([dict(zip(cols, r, strict=True)) for r in rows])
    df["balance"] = 0.99
    return {"metrics": df}


def test_one_ruleset_gives_one_length_figure():
    t = metrics([("base", 12.2, 12.0, 12.4, 1000, 0.01, 0.0, 0.02, 3, 0.01, -0.01, 0.03)])
    line = next(s for s in verdicts._shape(t) if s.startswith("Games last"))
    assert line.count("under base") == 1 and line.count("12.2") == 1, line


def test_two_rulesets_name_the_shortest_and_the_longest():
    t = metrics(
        [
            ("base", 12.2, 12.0, 12.4, 1000, 0.01, 0.0, 0.02, 3, 0.01, -0.01, 0.03),
            ("force", 9.1, 9.0, 9.2, 1000, 0.0, 0.0, 0.01, 0, 0.0, -0.02, 0.02),
        ]
    )
    line = next(s for s in verdicts._shape(t) if s.startswith("Games last"))
    assert "9.1 rounds" in line and "under force" in line and "the shortest" in line
    assert "12.2 [12.0, 12.4] under base" in line and "the longest" in line


def test_no_dominant_script_is_not_said_beside_a_failing_best_script_score():
    """Issue 45: "No strategy dominates" stood beside "dominance: fails". The
    sentence now speaks of the scripted field's strategies beating each other,
    and the verdict's property is the best script's score, so the two say
    different things and neither claims the rules have no dominant strategy."""
    rt = pd.DataFrame(
        {
            "variant": ["base"] * 3,
            "strategy": ["a", "b", "c"],
            "elo": [100.0, 0.0, -100.0],
            "elo_lo": [80.0, -20.0, -120.0],
            "elo_hi": [120.0, 20.0, -80.0],
            "games": [2000, 2000, 2000],
            "dominant": [False, False, False],
            "nash_p": [0.6, 0.4, 0.0],
        }
    )
    lines = verdicts._ratings({"ratings": rt})
    line = next(s for s in lines if "beats every other" in s)
    assert line.startswith("No strategy of the scripted field beats every other under base")
    assert not any("dominat" in s.lower() for s in lines), lines
    from balance import design

    assert "dominance" not in design.LABELS["dominance"]
    assert design.LABELS["dominance"] == "best script's score (scripted field)"
