"""The results store: one folder per run, keyed by a hash of its config.

A run folder holds Parquet tables (polars) and ``manifest.json`` (command,
resolved config, seed, engine version, rulings in force, timings). Folders are
written under a temporary name and renamed into place, so an interrupted run
never leaves a half-written result that a later run would trust.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import polars as pl

DEFAULT_DIR = Path("results")


def results_dir(path: str | os.PathLike | None = None) -> Path:
    """The store's root: the argument, else ``$BALANCE_RESULTS``, else ``./results``."""
    if path is not None:
        return Path(path)
    return Path(os.environ.get("BALANCE_RESULTS", DEFAULT_DIR))


def config_hash(resolved: dict) -> str:
    """A stable 16-hex-digit key for a fully resolved config."""
    text = json.dumps(resolved, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Store:
    """Reads and writes run folders under ``root/<game>/<key>/``."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = results_dir(root)

    def path(self, game: str, key: str) -> Path:
        return self.root / game / key

    def has(self, game: str, key: str) -> bool:
        return (self.path(game, key) / "manifest.json").is_file()

    def load(self, game: str, key: str) -> tuple[dict, dict[str, pl.DataFrame]] | None:
        """The manifest and tables of a stored run, or None if absent."""
        folder = self.path(game, key)
        if not (folder / "manifest.json").is_file():
            return None
        manifest = json.loads((folder / "manifest.json").read_text())
        tables = {p.stem: pl.read_parquet(p) for p in folder.glob("*.parquet")}
        return manifest, tables

    def save(self, game: str, key: str, manifest: dict, tables: dict[str, pl.DataFrame]) -> Path:
        """Write a run atomically: a temporary sibling folder, then a rename."""
        final = self.path(game, key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=final.parent))
        try:
            for name, df in tables.items():
                df.write_parquet(tmp / f"{name}.parquet")
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str))
            if final.exists():  # a concurrent writer got there first: same content
                shutil.rmtree(tmp)
            else:
                os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final


def write_text_atomic(path: Path, text: str) -> None:
    """Write a text file via a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
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
