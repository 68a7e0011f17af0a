"""The toolkit installs like a package: a wheel built from the checkout,
installed into a fresh virtual environment, runs from a folder that is not
the repository, reading its shipped configs, strategies, equilibrium
populations and rulings as package data (``balance.resources``) and a user's
own variant file by its path from that folder.

The wheel is built from a copy of the checkout's files (tracked and new, not
ignored), so the build writes nothing into the repository. The fresh venv
installs the wheel alone (``--no-deps``) and then sees the running
environment's third-party packages through a ``.pth`` line, so that no
package index is needed beyond the build backend: ``--no-build-isolation``
when this environment has the backend ``pyproject.toml`` asks for, else pip's
isolated build from the configured index (the local one in CI, as ``.ci/run``'s
own ``pip install -e`` uses).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import tomllib
import zipfile
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path

import pytest

from balance import __version__
from tests import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

GAMES = 200  # a handful of games: the command's work, not its statistics
USER_CAPACITY = 15  # the user's file sets a rule base leaves at 13
TIMINGS: dict[str, float] = {}


def _can_build_here() -> bool:
    """Whether this environment has the build backend ``pyproject.toml`` asks
    for (setuptools >= 68 with ``bdist_wheel``: built in from 70.1, else the
    ``wheel`` package), so the wheel can be built without isolation."""
    try:
        major, minor = (int(x) for x in version("setuptools").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (70, 1) or (
        (major, minor) >= (68, 0) and find_spec("wheel") is not None
    )


def _source_files() -> list[str]:
    """The checkout's files a build may read: tracked and new, not ignored."""
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def _run(cmd: list[str], cwd: Path, env: dict, step: str) -> subprocess.CompletedProcess:
    start = time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    TIMINGS[step] = time.perf_counter() - start
    return res


def _shipped_files() -> dict[str, Path]:
    """Every file the wheel must ship as data, by its name in the wheel."""
    out = {f"balance/{p.relative_to(ROOT).as_posix()}": p for p in (ROOT / "configs").rglob("*")}
    out.update({p.relative_to(ROOT).as_posix(): p for p in (ROOT / "strategies").rglob("*.toml")})
    out["balance/docs/rulings.md"] = ROOT / "docs" / "rulings.md"
    return {k: v for k, v in out.items() if v.is_file() and "__pycache__" not in k}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel, a fresh venv with it installed, a folder outside the
    repository to run in, and the environment to run with."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for f in _source_files():
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, src / f)

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("VIRTUAL_ENV", None)
    env.pop("BALANCE_RESULTS", None)
    env["NUMBA_CACHE_DIR"] = str(tmp / "numba")  # the venv's kernels compile here, not in ~/.cache

    isolation = ["--no-build-isolation"] if _can_build_here() else []
    res = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            *isolation,
            "-w",
            str(tmp / "dist"),
            str(src),
        ],
        tmp,
        env,
        "build the wheel",
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("balance-*.whl")

    venv = tmp / "venv"
    res = _run([sys.executable, "-m", "venv", str(venv)], tmp, env, "make the venv")
    assert res.returncode == 0, res.stderr[-3000:]
    py = venv / "bin" / "python"
    # the wheel first and alone: pip then sees no other balance to replace
    res = _run(
        [str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
        tmp,
        env,
        "install the wheel",
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.strip()
    # the dependencies from the running environment, after the venv's own
    # site-packages (a .pth line adds a folder; it runs none of that folder's .pth)
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (Path(site) / "_running_env_deps.pth").write_text("\n".join(deps) + "\n")

    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.toml").write_text(
        f'description = "my variant"\n[rules]\ncapacity = {USER_CAPACITY}\n'
    )
    return {"wheel": wheel, "venv": venv, "py": py, "cwd": elsewhere, "env": env, "site": site}


def test_the_wheel_ships_every_config_strategy_and_the_rulings(installed):
    with zipfile.ZipFile(installed["wheel"]) as z:
        names = set(z.namelist())
        shipped = _shipped_files()
        missing = sorted(set(shipped) - names)
        assert not missing, f"the wheel lacks {missing}"
        for name, path in shipped.items():
            assert z.read(name) == path.read_bytes(), name
    # the code's own folders, and no repository clutter
    assert {"balance/cli/__init__.py", "kernels/jit.py", "sims/tosk.py"} <= names
    assert not [n for n in names if n.startswith(("tests/", "configs/", "docs/", "reports/"))]
    print(
        f"\nwheel {installed['wheel'].name}: {installed['wheel'].stat().st_size} bytes, "
        f"{len(names)} files, {len(shipped)} of them data"
    )


def test_the_venv_imports_the_installed_copy_not_the_checkout(installed):
    code = (
        "import json, balance, strategies, kernels, sims; from balance import resources as r; "
        "print(json.dumps({'files': [m.__file__ for m in (balance, strategies, kernels, sims)], "
        "'data': [str(r.configs()), str(r.strategies()), str(r.rulings_file())], "
        "'shown': r.shown(r.configs() / 'tosk' / 'base.toml')}))"
    )
    res = _run([str(installed["py"]), "-c", code], installed["cwd"], installed["env"], "import")
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    venv = installed["venv"].resolve()
    for f in out["files"] + out["data"]:
        assert venv in Path(f).resolve().parents, f"{f} is not in the venv"
        assert ROOT.resolve() not in Path(f).resolve().parents, f
    assert out["shown"] == "configs/tosk/base.toml"


def test_version_from_another_folder(installed):
    res = _run(
        [str(installed["venv"] / "bin" / "balance"), "--version"],
        installed["cwd"],
        installed["env"],
        "balance --version",
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip() == f"balance {__version__}"


def _simulate(installed, variant: str, step: str) -> tuple[dict, dict]:
    """``balance tosk simulate`` in the folder outside the repository: its JSON
    and the manifest it stored under that folder's results/."""
    res = _run(
        [
            str(installed["venv"] / "bin" / "balance"),
            *("tosk", "simulate", "--variant", variant, "--a", "aggressor", "-n", str(GAMES)),
            *("--threads", "1", "--results", "results", "--json"),
        ],
        installed["cwd"],
        installed["env"],
        step,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    out = json.loads(res.stdout[res.stdout.index("{") :])
    store = installed["cwd"] / out["store"]
    assert installed["cwd"] in store.resolve().parents  # ./results of the current folder
    return out, json.loads((store / "manifest.json").read_text())


def test_a_command_plays_with_the_shipped_configs_strategies_and_rulings(installed):
    from balance.config import load_strategy
    from balance.registry import get_game

    out, manifest = _simulate(installed, "force", "balance tosk simulate --variant force")
    assert out["games"] == GAMES and out["a_wins"] + out["b_wins"] + out["draws"] == GAMES
    cfg = manifest["resolved_config"]
    # the shipped variant's rule, the shipped strategy's weights, the shipped rulings
    assert tomllib.loads((ROOT / "configs/tosk/variants/force.toml").read_text())["rules"] == {
        "force": True
    }
    assert cfg["rules"]["force"] is True and cfg["rules"]["capacity"] == 13
    assert cfg["a"]["spec"] == json.loads(json.dumps(load_strategy("tosk", "aggressor").spec))
    assert manifest["rulings"] == list(get_game("tosk").ruling_lines())
    assert manifest["rulings"]


def test_a_users_own_variant_file_is_read_by_its_path(installed):
    out, manifest = _simulate(
        installed, "force+./mine.toml", "balance tosk simulate --variant force+./mine.toml"
    )
    assert out["variant"] == "force+mine.toml" and out["games"] == GAMES
    rules = manifest["resolved_config"]["rules"]
    assert rules["capacity"] == USER_CAPACITY and rules["force"] is True

    res = _run(
        [
            str(installed["venv"] / "bin" / "balance"),
            "tosk",
            "simulate",
            "--variant",
            "./nosuch.toml",
        ],
        installed["cwd"],
        installed["env"],
        "a missing user file",
    )
    assert res.returncode != 0
    assert "'./nosuch.toml': no such file" in (res.stdout + res.stderr)


def test_a_report_page_renders_with_the_installed_templates(installed):
    out, _ = _simulate(installed, "force", "balance tosk simulate (stored)")
    page = installed["cwd"] / "reports" / "mine.html"
    res = _run(
        [str(installed["venv"] / "bin" / "balance"), "report", out["store"], "-o", str(page)],
        installed["cwd"],
        installed["env"],
        "balance report",
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    html = page.read_text(encoding="utf-8")
    assert "aggressor" in html and "</html>" in html
    # shipped files named as the repository names them, never by the install's path
    assert "site-packages" not in html and str(installed["venv"]) not in html


def test_the_shipped_equilibrium_population_loads_from_the_wheel(installed):
    from balance.equilibrium import load_population

    code = (
        "import json; from balance.equilibrium import load_population, default_folder; "
        "from balance.resources import shown; m, w, d = load_population('tosk'); "
        "print(json.dumps({'names': [s.name for s in m], 'weights': list(w), "
        "'folder': shown(default_folder('tosk'))}))"
    )
    res = _run([str(installed["py"]), "-c", code], installed["cwd"], installed["env"], "population")
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    members, weights, _ = load_population("tosk")  # the checkout's
    assert out["names"] == [s.name for s in members]
    assert out["weights"] == pytest.approx(list(weights))
    assert out["folder"] == "strategies/tosk/equilibrium"
    print("\n" + ", ".join(f"{k}: {v:.1f} s" for k, v in TIMINGS.items()))
