"""The build's one step that ``pyproject.toml`` cannot declare: the wheel
ships the repository's top-level ``configs/`` and ``docs/rulings.md`` inside
the ``balance`` package (``balance/configs/``, ``balance/docs/rulings.md``),
where :mod:`balance.resources` finds them with ``importlib.resources``.

The folders stay where they are in the checkout (tests, docs and users name
``configs/tosk/base.toml``); an editable install copies nothing and reads them
in place, as a checkout does."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# (source in the repository, destination inside the built ``balance`` package)
SHIPPED = (("configs", "configs"), ("docs/rulings.md", "docs/rulings.md"))


class BuildPyWithData(build_py):
    """``build_py``, then the shipped data copied into the built package."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own folders
        for src, dest in SHIPPED:
            source = HERE / src
            target = Path(self.build_lib) / "balance" / dest
            if source.is_dir():
                # a build/ left by an earlier build keeps files since deleted
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)


setup(cmdclass={"build_py": BuildPyWithData})
