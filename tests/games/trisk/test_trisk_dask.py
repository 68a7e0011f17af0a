"""The equal-power test on a Dask cluster: a small ``trisk power`` gives
the same tables, bit for bit, as on the local executor (every stage: the
cells, the Primals, the regression over random decks, the finishes check)."""

from __future__ import annotations

import pandas as pd
import pytest

from balance.games.trisk import power as tp
from tests.games.trisk.test_trisk_power import _tiny_plan, _two_cards

pytestmark = pytest.mark.slow  # starts worker processes


def _tables(res: tp.PowerResult) -> dict:
    return {
        "cards": res.cards,
        "cells": res.cells,
        "primals": res.primals,
        "regression": res.regression,
    }


def test_a_small_power_test_on_dask_equals_the_local_one(on_dask, tmp_path, tiny_power_local):
    """``here`` is :func:`tiny_power_local`: the same plan on the local executor,
    one thread, an empty store (played once for this file and the resume test)."""
    plan = _tiny_plan(_two_cards())
    here = tiny_power_local
    assert here.plan == plan
    there = tp.run_power(plan, results=tmp_path / "there", progress=False)
    assert there.runs_read == 0 and there.runs_simulated == here.runs_simulated > 0
    for name, table in _tables(here).items():
        assert table is not None and len(table), name
        pd.testing.assert_frame_equal(_tables(there)[name], table, check_exact=True, obj=name)
    assert there.regression_info == here.regression_info
    assert there.finishes == here.finishes and there.finishes["differ"] == 0
    assert there.claim == here.claim and there.primal_claim == here.primal_claim
