"""Checks on the folders and files a command will write, made before any work,
so that a bad path is one line and nothing is simulated or written first."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from balance.errors import EnvironmentFailure, UserError


def _name(path) -> str:
    """A file as a message names it: a shipped one by its repository name
    (``configs/tosk/base.toml``, wherever installed), a user's as given."""
    from balance.resources import shipped_name

    return shipped_name(path) or str(path)


def _first_existing(p: Path) -> Path:
    q = p.absolute()
    while not q.exists() and q != q.parent:
        q = q.parent
    return q


def writable_dir(path, what: str) -> Path:
    """``path`` as a folder this process can create or write into; else one line.

    Nothing is created: the check walks up to the first existing ancestor, which
    must be a folder (not a file) and writable."""
    if path is None:
        raise UserError(f"{what}: no folder given")
    if str(path).strip() == "":
        raise UserError(f"{what}: the path is empty; give a folder (e.g. results)")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UserError(f"{what} '{p}' is a file, not a folder")
    q = _first_existing(p)
    if not q.is_dir():
        raise UserError(f"{what} '{p}' cannot be made: '{q}' is a file, not a folder")
    if not os.access(q, os.W_OK | os.X_OK):
        raise EnvironmentFailure(f"{what} '{p}' cannot be written: '{q}' is read-only")
    return p


def writable_file(path, what: str) -> Path:
    """``path`` as a file this process can write (its folder made if needed); else one line."""
    if path is None or str(path).strip() == "":
        raise UserError(f"{what}: the path is empty; give a file name")
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{what} '{p}' is a folder; give a file name")
    writable_dir(p.parent if str(p.parent) else Path("."), f"{what}'s folder")
    if p.exists() and not os.access(p, os.W_OK):
        raise EnvironmentFailure(f"{what} '{p}' cannot be written: the file is read-only")
    return p


def dir_option(what: str):
    """A Typer callback checking a folder option (None passes: the default applies)."""

    def check(value):
        return None if value is None else writable_dir(value, what)

    return check


# The largest TOML file (a ruleset, variant, strategy, card set, plan or
# thresholds file) read: the reference card set is about 40 kB and the biggest
# shipped file under 100 kB, so 4 MB is far beyond any real one while a wrong
# path (a log, a disk image, /dev/zero) is refused at once instead of read.
MAX_TOML_BYTES = 4 * 1024 * 1024


def readable_file(path, shown: str | None = None, limit: int = MAX_TOML_BYTES) -> Path:
    """``path`` as a regular file of at most ``limit`` bytes; else one line.

    Checked with ``stat`` before opening, so a FIFO (whose open blocks), a
    device (``/dev/zero`` reads forever), a folder or a huge file is refused
    without being read."""
    import stat as st

    shown = _name(path) if shown is None else shown
    if str(path).strip() == "":
        raise UserError("a file path is empty; give a .toml file")
    try:
        mode = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{shown}: no such file") from None
    except NotADirectoryError:
        raise UserError(f"{shown}: no such file (a part of the path is a file)") from None
    except OSError as exc:
        raise UserError(f"{shown}: cannot be read ({exc.strerror or exc})") from None
    if st.S_ISDIR(mode.st_mode):
        raise UserError(f"{shown}: is a folder, not a TOML file")
    if not st.S_ISREG(mode.st_mode):
        kind = (
            "a FIFO"
            if st.S_ISFIFO(mode.st_mode)
            else "a device"
            if st.S_ISCHR(mode.st_mode) or st.S_ISBLK(mode.st_mode)
            else "a socket"
            if st.S_ISSOCK(mode.st_mode)
            else "not a regular file"
        )
        raise UserError(f"{shown}: is {kind}; give a regular .toml file")
    if mode.st_size > limit:
        raise UserError(
            f"{shown}: {mode.st_size:,} bytes is too large for a TOML file; at most {limit:,}"
        )
    return Path(path)


def load_toml(path: Path, shown: str | None = None) -> dict:
    """Read a TOML file; a syntax error, a file that is not a regular file
    (a folder, a FIFO, a device) or one over :data:`MAX_TOML_BYTES` is a user
    error naming the file (as ``shown``, default the path)."""
    shown = _name(path) if shown is None else shown
    readable_file(path, shown)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TOML_BYTES + 1)  # bounded: the file may grow after stat
        if len(raw) > MAX_TOML_BYTES:
            raise UserError(f"{shown}: too large for a TOML file; at most {MAX_TOML_BYTES:,} bytes")
        return tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise UserError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{shown}: is a folder, not a TOML file") from None
    except UnicodeDecodeError as exc:
        raise UserError(
            f"{shown}: not UTF-8 text (byte {exc.start}); TOML files are UTF-8"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{shown}: malformed TOML: {exc}") from None
    except OSError as exc:
        raise UserError(f"{shown}: cannot be read ({exc.strerror or exc})") from None


def check_keys(path, where: str, table: dict, allowed) -> None:
    """Refuse a key of ``table`` (at ``where`` in the file ``path``) not in ``allowed``: one line."""
    allowed = list(allowed)
    for key in table:
        if key not in allowed:
            raise UserError(
                f"{path}: unknown key '{key}' in {where}; allowed: {', '.join(allowed)}"
            )


# Who wrote each output file: one small JSON file per output folder, mapping a
# file's name to the experiment that wrote it. A ledger beside the files (not
# a mark inside them) works alike for HTML, SVG, PNG and TOML, and leaves the
# files themselves byte for byte as the writers make them.
WRITERS = ".balance-writers.json"
# The experiment id of the study's pages (``balance study`` and ``balance report``).
STUDY = "study"


def _ledger(folder: Path) -> dict:
    import json

    try:
        data = json.loads((folder / WRITERS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def written_by(path) -> dict | None:
    """The experiment recorded as the writer of ``path`` (``{"experiment",
    "command"}``), or None: no file there, or none recorded."""
    p = Path(path)
    if not p.exists():
        return None
    entry = _ledger(p.parent).get(p.name)
    return entry if isinstance(entry, dict) and "experiment" in entry else None


def check_replace(path, experiment: str, option: str, force: bool = False) -> Path:
    """Refuse, in one line, to replace ``path`` when another experiment wrote it.

    ``experiment`` identifies what is about to be written (the same plan run
    again is the same experiment and replaces its own file). A file with no
    record (written by hand or before records were kept) is not claimed by
    any experiment and may be replaced. ``option`` is the flag that names
    another path (``--out``, ``--page``, ``--chart``); ``force`` allows the
    replacement. Checked before any work, so nothing is played first."""
    p = Path(path)
    entry = written_by(p)
    if force or entry is None or entry.get("experiment") == experiment:
        return p
    by = entry.get("command") or entry["experiment"]
    raise UserError(
        f"'{p}' was written by another experiment ({by}); "
        f"write elsewhere with {option} <other> or replace it with --force"
    )


def record_written(path, experiment: str, command: str) -> None:
    """Record ``experiment`` (run as ``command``) as the writer of ``path``."""
    import json

    from balance.store import write_text_atomic

    p = Path(path)
    data = _ledger(p.parent)
    data[p.name] = {"experiment": experiment, "command": command}
    write_text_atomic(p.parent / WRITERS, json.dumps(data, indent=1, sort_keys=True) + "\n")


def check_replace_folder(folder, experiment: str, option: str, force: bool = False) -> Path:
    """:func:`check_replace` for a folder a command fills with files of fixed
    names (``compare --charts``): refused when any file there was written by
    another experiment."""
    f = Path(folder)
    for name in sorted(_ledger(f)) if f.is_dir() else []:
        check_replace(f / name, experiment, option, force)
    return f


def record_folder(folder, names, experiment: str, command: str) -> None:
    """Record ``experiment`` as the writer of each of ``names`` in ``folder``
    (those that exist: what the command wrote)."""
    for name in names:
        if (Path(folder) / name).is_file():
            record_written(Path(folder) / name, experiment, command)


def experiment_id(*parts) -> str:
    """A short, stable id for the parts that define an experiment."""
    import hashlib
    import json

    blob = json.dumps([str(x) for x in parts])
    return hashlib.sha256(blob.encode()).hexdigest()[:8]
