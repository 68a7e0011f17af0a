"""Where the files the toolkit ships are read from: every config (rulesets,
variants, plans, card sets, thresholds), every named strategy and equilibrium
population, and the rulings.

They are package data, found with :func:`importlib.resources.files`, so one
lookup serves every way of installing:

- a checkout, or an editable install (``pip install -e .``): the repository's
  own ``configs/``, ``strategies/`` and ``docs/rulings.md``;
- a wheel (``pip install .``, ``pipx install .``): the same files, which the
  build copies into the installed ``balance`` package (``balance/configs/``,
  ``balance/docs/rulings.md``; ``setup.py``) and ships as the data of the
  ``strategies`` package (``pyproject.toml``'s package-data).

Only shipped names resolve here. A file a user names by path
(``--variants base,./mine.toml``) is read from that path, relative to the
current folder, by the code that takes the option; results and pages go to
the current folder's ``results/`` and ``reports/``.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

from balance.errors import EnvironmentFailure


def _folder(package: str) -> Path:
    """The folder of an installed package, as a real path (the engines and the
    store read files by path; a zipped install has none)."""
    where = files(package)
    if not isinstance(where, Path) or not where.is_dir():
        raise EnvironmentFailure(
            f"package '{package}' is not installed as a folder ({where}); "
            "install balance from a wheel or a checkout (pip install .)"
        )
    return where


@cache
def package() -> Path:
    """The installed ``balance`` package's folder."""
    return _folder("balance")


@cache
def root() -> Path:
    """The folder holding ``balance/``, ``kernels/``, ``sims/`` and ``strategies/``:
    the repository root in a checkout, ``site-packages`` in an installed wheel."""
    return package().parent


def _shipped(*parts: str) -> Path:
    """``parts`` inside the installed package when a wheel put it there, else
    in the checkout (the repository root)."""
    inside = package().joinpath(*parts)
    return inside if inside.exists() else root().joinpath(*parts)


def templates(package: str = "balance") -> Path:
    """The page templates of ``package`` (the core's, or a game's home:
    ``templates(__package__)``), shipped as its package data."""
    return _folder(package) / "templates"


@cache
def configs() -> Path:
    """The shipped ``configs/`` folder (``<game>/`` and ``verdict.toml``)."""
    return _shipped("configs")


@cache
def strategies() -> Path:
    """The shipped ``strategies/`` folder (``<game>/<name>.toml`` and
    ``<game>/equilibrium/``): the data of the ``strategies`` package."""
    return _folder("strategies")


@cache
def rulings_file() -> Path:
    """The shipped rulings (``docs/rulings.md``)."""
    return _shipped("docs", "rulings.md")


def shipped_name(path) -> str | None:
    """The repository name of a shipped file or folder (``configs/tosk/base.toml``,
    ``strategies/tosk/equilibrium``, ``docs/rulings.md``), wherever it is
    installed; None for any other path (a user's file)."""
    try:
        full = Path(path).resolve()
    except (OSError, ValueError):  # a name no file can have (a NUL byte, a loop)
        return None
    for label, folder in (
        ("configs", configs()),
        ("strategies", strategies()),
        ("docs/rulings.md", rulings_file()),
    ):
        try:
            rel = full.relative_to(folder.resolve())
        except ValueError:
            continue
        return (Path(label) / rel).as_posix() if rel.parts else label
    return None


def shown(path) -> str:
    """``path`` as a message or a page shows it: a shipped file as the
    repository names it (``configs/tosk/base.toml``, ``strategies/tosk/...``),
    wherever it is installed; any other file relative to the repository when
    inside a checkout, else as given."""
    name = shipped_name(path)
    if name is not None:
        return name
    try:
        return Path(path).resolve().relative_to(root().resolve()).as_posix()
    except (OSError, ValueError):
        return str(path)
