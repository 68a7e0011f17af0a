"""``balance.resources``: the one place the shipped files are found, in a
checkout and in an installed wheel's layout, and named readably wherever
they are. (``tests/core/test_wheel.py`` builds and installs a real wheel.)"""

from __future__ import annotations

import re
import shutil

import pytest

from balance import resources
from balance.errors import UserError
from balance.paths import load_toml
from tests import ROOT


@pytest.fixture
def fresh():
    """The cached lookups cleared before and after (a test moves the package)."""
    cached = (resources.package, resources.root, resources.configs)
    cached += (resources.strategies, resources.rulings_file)
    for f in cached:
        f.cache_clear()
    yield
    for f in cached:
        f.cache_clear()


def test_a_checkout_reads_its_own_folders(fresh):
    assert resources.configs() == ROOT / "configs"
    assert resources.strategies() == ROOT / "strategies"
    assert resources.rulings_file() == ROOT / "docs" / "rulings.md"
    assert resources.templates() == ROOT / "balance" / "templates"


def test_a_wheel_layout_reads_the_copies_inside_the_package(fresh, tmp_path, monkeypatch):
    """A wheel puts ``configs/`` and ``docs/rulings.md`` inside ``balance/``
    (setup.py); beside it lies no repository."""
    site = tmp_path / "site-packages"
    pkg = site / "balance"
    shutil.copytree(ROOT / "configs", pkg / "configs")
    (pkg / "docs").mkdir()
    shutil.copy2(ROOT / "docs" / "rulings.md", pkg / "docs" / "rulings.md")
    monkeypatch.setattr(resources, "package", lambda: pkg)
    assert resources.configs() == pkg / "configs"
    assert resources.rulings_file() == pkg / "docs" / "rulings.md"
    shipped = pkg / "configs" / "tosk" / "base.toml"
    assert resources.shown(shipped) == "configs/tosk/base.toml"
    assert resources.shown(pkg / "docs" / "rulings.md") == "docs/rulings.md"
    with pytest.raises(UserError, match=r"^configs/tosk/nosuch\.toml: no such file$"):
        load_toml(pkg / "configs" / "tosk" / "nosuch.toml")


def test_shipped_files_are_named_as_the_repository_names_them(fresh):
    assert resources.shown(ROOT / "configs" / "tosk" / "base.toml") == "configs/tosk/base.toml"
    assert resources.shown(ROOT / "strategies" / "tosk" / "equilibrium") == (
        "strategies/tosk/equilibrium"
    )
    assert resources.shipped_name(ROOT / "configs") == "configs"
    assert resources.shipped_name(ROOT / "docs" / "rulings.md") == "docs/rulings.md"


def test_a_users_file_is_named_as_given(fresh, tmp_path):
    mine = tmp_path / "mine.toml"
    assert resources.shipped_name(mine) is None
    assert resources.shown(mine) == str(mine)
    assert resources.shipped_name("a\0b") is None  # no file has that name: no crash
    with pytest.raises(UserError, match=r"mine\.toml: no such file$"):
        load_toml(mine)


# a path built from a module's own location to a shipped folder: what a wheel breaks
_OWN_PATH = re.compile(r"(__file__|\bROOT\b).*[\"'](configs|strategies|docs)[\"']")


def test_no_other_module_finds_shipped_files_from_its_own_location():
    bad = [
        f"{f.relative_to(ROOT)}:{i}"
        for f in sorted((ROOT / "balance").rglob("*.py"))
        if f.name != "resources.py"
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if _OWN_PATH.search(line)
    ]
    assert not bad, f"read shipped files through balance.resources: {bad}"
