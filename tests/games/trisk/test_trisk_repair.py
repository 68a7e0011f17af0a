"""Trisk's repair targets (balance/games/trisk/repair.py): every Primal's
reference deck against every reference deck."""

from __future__ import annotations

from balance import config, repair, sweep
from balance.games.trisk import repair as trisk_repair


def test_every_primal_is_a_repair_target():
    table = repair.metric_table("trisk")
    assert {"max_primal_score", "min_primal_score"} <= set(table)
    t = repair.parse_target("min_primal_score >= 45%", table)
    assert (t.lo, t.unit) == (0.45, "share")


def test_the_primal_metrics_bound_every_reference_deck(tmp_path):
    """The strongest and weakest Primal are the extremes of the decks' scores
    in the reference decks' round robin, each interval simultaneous over the
    ten Primals: it holds every deck's own value, and is wider than the
    winning deck's own interval."""
    decks = config.reference_deck_names("trisk")
    field = trisk_repair.deck_field("trisk", "tempo,control")
    assert field.split(",") == [f"tempo@{d}" for d in decks]
    rows, keys = trisk_repair.measure(
        "trisk", ["base"], "tempo", 20, 3, None, 1 << 15, tmp_path, False
    )
    (row,) = rows
    n = len(decks)
    assert len(keys) == n * (n - 1) // 2  # every pair of different decks, once
    res = sweep.evaluate("trisk", ["base"], field, 20, 3, None, 1 << 15, tmp_path, progress=False)
    st = res["tables"]["strategies"]
    assert row["games"] == sum(r.games for r in res["runs"].values()) == 45 * 20
    top, bottom = st.loc[st["score"].idxmax()], st.loc[st["score"].idxmin()]
    assert row["max_primal_score"] == top.score and row["min_primal_score"] == bottom.score
    assert row["max_primal_score_lo"] < top.score_lo and row["max_primal_score_hi"] > top.score_hi
    assert row["min_primal_score_lo"] < bottom.score_lo
    assert (st["score_lo"] <= row["max_primal_score_hi"]).all()
