"""The test suite, laid out by layer (``core/``, ``stats/``, ``store/``,
``cli/``, ``report/``) and by game (``games/<game>/``).

``TESTS`` is this folder and ``ROOT`` the repository root, for the tests
that read files: use them rather than counting ``__file__``'s parents."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
