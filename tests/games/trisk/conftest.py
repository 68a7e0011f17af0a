"""Fixtures shared by the Trisk test files."""

from __future__ import annotations

import pytest

from tests.once import built_once


@pytest.fixture(scope="session")
def tiny_power_local(tmp_path_factory):
    """The tiny two-card equal-power test (``_tiny_plan(_two_cards())``) played
    on the local executor, one thread, into an empty store: its
    :class:`~balance.games.trisk.power.PowerResult`.

    Played once per session for both files that need it (the resume test of
    ``test_trisk_power.py`` and the Dask comparison of ``test_trisk_dask.py``,
    which may run on different workers): about a minute of games each saved.
    The result is read back from a pickle, so a test may not rely on it being
    the very object another test saw; no test modifies it."""
    from balance import executor
    from balance.games.trisk import power as tp
    from tests.games.trisk.test_trisk_power import _tiny_plan, _two_cards

    def build(folder):
        with executor.using(executor.Local()):
            return tp.run_power(
                _tiny_plan(_two_cards()), results=folder / "results", progress=False, threads=1
            )

    return built_once(tmp_path_factory, "trisk-tiny-power", build)[1]
