"""The results store: one folder per run, keyed by a hash of its config.

A run folder holds Parquet tables (polars) and ``manifest.json`` (command,
resolved config, seed, engine version, rulings in force, timings). Folders are
written under a temporary name and renamed into place, so an interrupted run
never leaves a half-written result that a later run would trust.

The store does not trust its files either: the manifest records the SHA-256 of
every table file and of its own content (its ``integrity`` block), and every
read checks them, so a truncated, garbage or edited file is caught. The reader
of an entry adds checks of its own (a run's counts must add up, see
:func:`balance.runner.check_run`). A damaged entry is never used: a command
that can recompute it reports it in one line on stderr, moves it into
``<root>/_quarantine/`` (never deletes it) and recomputes it; a report, which
only reads, leaves it out or fails in one line naming it, and moves nothing.
Entries written before the checksums existed (no ``integrity`` block) are
read with the reader's checks only.

An entry must also be the one its folder's name says: its key is recomputed
from the config the manifest records (a run's ``resolved_config``, another
entry's ``key_config``) on every read, so a self-consistent folder copied or
moved under another key is damage, not another run's result. No machine path
is part of what is hashed (a card set given by a path is named by its
content digest: ``runner.key_rules``), so a key does not depend on how a path
or ``--results`` is spelled.

A writer's temporary folder is named ``.tmp-<key>-<host>-<pid>-<random>``; a
writer killed before its rename (SIGKILL, a power cut) leaves it behind, and
the next process that uses the game's folder removes it once its writer is
gone (written on this host and no such process runs) or, from another
host, untouched for :data:`STALE_TMP_S`; a live writer's folder on this host
is never touched.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from balance import phases

if TYPE_CHECKING:  # polars is imported where it is used: a cached start stays quick
    import polars as pl

DEFAULT_DIR = Path("results")
QUARANTINE = "_quarantine"  # damaged entries are moved here, under their game's name
INTEGRITY = "integrity"  # the manifest's block of checksums
INTEGRITY_FORMAT = 1
# what an entry's key is the hash of, in its manifest: a run's resolved config,
# or another entry's (an analysis's piece) key config
KEY_FIELDS = ("resolved_config", "key_config")
TMP = ".tmp-"
# a temporary folder from another host (or an older version, whose names held
# no pid) untouched this long is stale: a writer writes one entry's files in
# seconds to minutes, each write renewing the times, so only a dead writer
# leaves one this old (this host's are judged by their writer's pid)
STALE_TMP_S = 3600.0


class Damaged(Exception):
    """A stored entry that cannot be trusted; the message says why in a few
    words (e.g. ``run.parquet fails its checksum``)."""


def results_dir(path: str | os.PathLike | None = None) -> Path:
    """The store's root: the argument, else ``$BALANCE_RESULTS``, else ``./results``."""
    if path is not None:
        return Path(path)
    return Path(os.environ.get("BALANCE_RESULTS", DEFAULT_DIR))


def config_hash(resolved: dict) -> str:
    """A stable 16-hex-digit key for a fully resolved config."""
    text = json.dumps(resolved, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def entry_key(manifest: dict) -> str | None:
    """The key an entry's manifest says it is stored under: the hash of its
    recorded config (:data:`KEY_FIELDS`); None for an entry that records none
    (written before keys were proven on read)."""
    for name in KEY_FIELDS:
        if name in manifest:
            return config_hash(manifest[name])
    return None


def check_key(manifest: dict, key: str) -> None:
    """Raise :class:`Damaged` unless the manifest's config hashes to ``key``
    (the folder's name): a run copied or moved here from another key is
    another run's result."""
    got = entry_key(manifest)
    if got is not None and got != key:
        raise Damaged(
            f"manifest.json's config hashes to {got}, not to this folder's key "
            "(an entry copied or moved here)"
        )


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest_digest(manifest: dict) -> str:
    """The checksum of a manifest's content (as JSON reads it back), whatever
    the order of its keys or the layout of its file."""
    return sha256(
        json.dumps(manifest, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()
    )


def warn(line: str) -> None:
    """One line on stderr."""
    print(f"warning: {line}", file=sys.stderr, flush=True)


def _read_bytes(path: Path) -> bytes:
    """A file's bytes; a file that is missing (or not a file) is damage, a
    file we may not read is the environment's problem (the OSError goes on)."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise Damaged(f"{path.name} is missing") from None
    except PermissionError:
        raise
    except OSError as e:
        raise Damaged(f"{path.name} cannot be read ({e.strerror or e})") from None


def read_manifest(folder: Path) -> tuple[dict, dict | None]:
    """A stored entry's manifest (without its integrity block) and the
    checksums of its table files (None for an entry written before the store
    kept checksums); raises :class:`Damaged`."""
    raw = _read_bytes(Path(folder) / "manifest.json")
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Damaged("manifest.json is not valid JSON (garbage or truncated)") from None
    if not isinstance(manifest, dict):
        raise Damaged("manifest.json does not hold a manifest")
    integ = manifest.pop(INTEGRITY, None)
    if integ is None:
        return manifest, None
    files = integ.get("files") if isinstance(integ, dict) else None
    claimed = integ.get("manifest") if isinstance(integ, dict) else None
    if (
        not isinstance(files, dict)
        or not isinstance(claimed, str)
        or not all(
            isinstance(k, str) and isinstance(v, str) and "/" not in k and k.endswith(".parquet")
            for k, v in files.items()
        )
    ):
        raise Damaged("manifest.json's checksums are unreadable")
    if (
        _manifest_digest(
            {**manifest, INTEGRITY: {k: v for k, v in integ.items() if k != "manifest"}}
        )
        != claimed
    ):
        raise Damaged("manifest.json fails its checksum")
    return manifest, files


def read_files(folder: Path, files: dict | None) -> dict[str, bytes]:
    """The bytes of an entry's table files, by stem, each checked against its
    checksum (``files`` from :func:`read_manifest`; None: every ``*.parquet``
    there, unchecked); raises :class:`Damaged`."""
    folder = Path(folder)
    if files is None:
        return {p.stem: _read_bytes(p) for p in sorted(folder.glob("*.parquet"))}
    out = {}
    for name, digest in sorted(files.items()):
        data = _read_bytes(folder / name)
        if sha256(data) != digest:
            raise Damaged(f"{name} fails its checksum")
        out[name[: -len(".parquet")]] = data
    return out


def parse_parquet(name: str, data: bytes) -> pl.DataFrame:
    try:
        import polars as pl

        return pl.read_parquet(io.BytesIO(data))
    except Exception:  # noqa: BLE001 (polars and pyarrow raise many kinds on garbage)
        raise Damaged(f"{name}.parquet is unreadable (garbage or truncated)") from None


def parquet_bytes(table) -> bytes:
    """A polars DataFrame (zstd, polars' default) or a pyarrow Table as the
    bytes of a Parquet file. A pyarrow Table is a run's one-row table of a few
    dozen short columns: written plain (no compression, dictionary or
    statistics, which cost more time than they save space on one row)."""
    import pyarrow as pa

    if isinstance(table, pa.Table):
        import pyarrow.parquet as pq

        sink = pa.BufferOutputStream()
        pq.write_table(
            table, sink, compression="none", use_dictionary=False, write_statistics=False
        )
        return sink.getvalue().to_pybytes()
    buf = io.BytesIO()
    table.write_parquet(buf)
    return buf.getvalue()


class Store:
    """Reads and writes run folders under ``root/<game>/<key>/``."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = results_dir(root)

    def path(self, game: str, key: str) -> Path:
        folder = self.root / game
        if folder not in _SWEPT:  # once per game folder and process
            _SWEPT.add(folder)
            sweep_stale(folder)
        return folder / key

    def has(self, game: str, key: str) -> bool:
        return (self.path(game, key) / "manifest.json").is_file()

    @phases.timed("store", part="store_read")
    def load(
        self,
        game: str,
        key: str,
        parse: Callable | None = None,
        recompute: bool = True,
        raw: bool = False,
    ):
        """The manifest and tables of a stored entry (or ``parse(manifest,
        tables)``, which raises :class:`Damaged` for content it cannot trust),
        or None if absent. ``raw``: the tables as their checked bytes, for a
        reader that parses them itself.

        A damaged entry is never used. With ``recompute`` (the caller makes
        what it does not find) it is reported in one line, set aside (moved
        into ``_quarantine``) and None returned, as if absent. A caller that
        only reads (``recompute=False``: a report built from the store) gets
        a one-line :class:`~balance.errors.UserError` naming the entry and
        what is wrong, and the entry stays where it is.
        """
        folder = self.path(game, key)
        try:
            ident = folder.stat().st_ino
        except FileNotFoundError:
            return None
        try:
            manifest, files = read_manifest(folder)
            check_key(manifest, key)
            tables = read_files(folder, files)
            if not raw:
                tables = {name: parse_parquet(name, data) for name, data in tables.items()}
            return (manifest, tables) if parse is None else parse(manifest, tables)
        except Damaged as e:
            if not recompute:
                from balance.errors import UserError

                raise UserError(
                    f"{folder}: {e}; run `balance study` (or the command that "
                    "made it) to recompute it"
                ) from None
            self.set_aside(folder, str(e), ident)
            return None

    def set_aside(self, folder: Path, reason: str, ident: int | None = None) -> Path | None:
        """Move a damaged entry into ``<root>/_quarantine/<game>/<key>.<n>``
        and say so in one line (the caller recomputes it); None (and the line
        says why) if it cannot be moved. ``ident``: the folder's inode when it
        was read; a folder replaced since (a concurrent writer stored a good
        copy) stays."""
        then = "; recomputing"
        try:
            if ident is not None and folder.stat().st_ino != ident:
                return None  # replaced since it was read
            dest_dir = self.root / QUARANTINE / folder.parent.name
            dest_dir.mkdir(parents=True, exist_ok=True)
            for n in range(1, 10_000):
                dest = dest_dir / f"{folder.name}.{n}"
                if dest.exists():
                    continue
                try:
                    os.rename(folder, dest)
                except FileNotFoundError:
                    return None  # another process set it aside first
                except OSError:
                    if dest.exists():
                        continue  # another process took this name first
                    raise
                warn(f"{folder}: {reason}; set aside as {dest}{then}")
                return dest
            raise OSError("too many entries set aside under this name")
        except FileNotFoundError:
            return None
        except OSError as e:
            warn(f"{folder}: {reason}; could not be set aside ({e.strerror or e}){then}")
            return None

    @phases.timed("store", part="store_write")
    def save(self, game: str, key: str, manifest: dict, tables: dict) -> Path:
        """Write a run atomically: a temporary sibling folder, then a rename.
        ``tables``: polars DataFrames or pyarrow Tables, by name.

        The manifest gets an integrity block: the SHA-256 of each table file
        and of the manifest's own content."""
        final = self.path(game, key)
        content = json.loads(json.dumps(manifest, default=str))  # as it will read back
        content.pop(INTEGRITY, None)
        got = entry_key(content)
        if got is not None and got != key:  # never store an entry its reader would refuse
            raise ValueError(f"an entry whose config hashes to {got} stored as {key}")
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(key), dir=final.parent))
        try:
            files = {}
            for name, df in tables.items():
                data = parquet_bytes(df)  # hashed as written, not read back
                with open(tmp / f"{name}.parquet", "wb") as f:
                    f.write(data)
                files[f"{name}.parquet"] = sha256(data)
            integ = {"format": INTEGRITY_FORMAT, "files": files}
            integ["manifest"] = _manifest_digest({**content, INTEGRITY: integ})
            content[INTEGRITY] = integ
            # one line: json's C encoder (an indented manifest goes through its
            # pure-Python one, about a millisecond a run in a study of 20,000)
            (tmp / "manifest.json").write_text(json.dumps(content))
            if final.exists():  # a concurrent writer got there first: same content
                shutil.rmtree(tmp)
            else:
                os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final


# ---------------------------------------------------------------- temporary folders
_SWEPT: set[Path] = set()  # the game folders this process has swept


@cache
def _host() -> str:
    """This machine, as a temporary folder's name records it (8 hex digits:
    a host name may hold any character): its name and its pid namespace (two
    containers of one name sharing a store see different pids)."""
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        ns = ""
    return hashlib.sha256(f"{socket.gethostname()}\0{ns}".encode()).hexdigest()[:8]


def _tmp_prefix(key: str) -> str:
    return f"{TMP}{key}-{_host()}-{os.getpid()}-"


_TMP_NAME = re.compile(r"\.tmp-[^-]+-([0-9a-f]{8})-([0-9]+)-[^-]*")


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (one of another user
    counts: it may be a writer)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True  # cannot tell: keep its folder
    return True


def _last_touched(folder: Path) -> float:
    """The newest modification time of the folder and the files in it."""
    times = [folder.stat().st_mtime]
    for p in folder.iterdir():
        try:
            times.append(p.stat().st_mtime)
        except OSError:
            pass
    return max(times)


def stale_reason(folder: Path, now: float | None = None) -> str | None:
    """Why a writer's temporary folder may be removed (None: it may be a
    live writer's, keep it). One written on this host is its writer's while
    that process runs (however long it is suspended), and stale once it is
    gone; one from another host sharing the store, or named before the
    names held a pid, is stale when nothing in it changed for
    :data:`STALE_TMP_S`."""
    m = _TMP_NAME.fullmatch(folder.name)
    if m is not None and m.group(1) == _host():
        return None if _alive(int(m.group(2))) else f"its writer (pid {m.group(2)}) is gone"
    try:
        age = (time.time() if now is None else now) - _last_touched(folder)
    except OSError:
        return None  # gone already, or unreadable: leave it
    return f"untouched for {age / 3600:.1f} h" if age > STALE_TMP_S else None


def sweep_stale(folder: Path) -> list[Path]:
    """Remove the temporary folders under ``folder`` (one game's folder of
    the store) that no live writer owns (:func:`stale_reason`): what an
    interrupted or killed writer left. Returns what was removed; says
    nothing (a leftover is no damage: nothing read it)."""
    removed = []
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(TMP)]
    except OSError:
        return removed
    for e in entries:
        path = Path(e.path)
        try:
            if not e.is_dir(follow_symlinks=False) or stale_reason(path) is None:
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            removed.append(path)
    return removed


def write_text_atomic(path: Path, text: str) -> None:
    """Write a text file via a temporary file and a rename."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write a file via a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def chart_cache(results=None) -> Path:
    """Where drawn charts are kept by content hash ($BALANCE_CHART_CACHE or
    ``<results>/_charts``)."""
    env = os.environ.get("BALANCE_CHART_CACHE")
    return Path(env) if env else results_dir(results) / "_charts"
