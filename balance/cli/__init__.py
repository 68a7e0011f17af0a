"""The ``balance`` command line (Typer): ``root`` assembles it from the
registry; ``game`` holds the commands every game has, ``study`` the study
and report, ``bench`` the benchmarks, ``options`` and ``output`` what they
share. A game's own commands live in its home (``balance/games/<game>/``).

``app`` and ``main`` are loaded on first use, so a game's commands module can
import ``balance.cli.options`` without building the whole command line.
"""

from __future__ import annotations

__all__ = ["app", "main"]


def __getattr__(name: str):
    if name in __all__:
        from balance.cli import root

        return getattr(root, name)
    raise AttributeError(f"module 'balance.cli' has no attribute {name!r}")
