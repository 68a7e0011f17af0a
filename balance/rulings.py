"""The rulings in force, read from the project's copy in ``docs/rulings.md``."""

import re
from functools import cache
from pathlib import Path

from balance import resources

RULINGS_FILE = resources.rulings_file()


@cache
def rulings(prefix: str, path: Path = RULINGS_FILE) -> tuple[str, ...]:
    """Every ruling line of ``path`` (default ``docs/rulings.md``) whose id
    starts with ``prefix`` (e.g. ``T`` for Tosk), the toolkit's own decisions
    (``TD…``) included, as ``"T3 Force: …"``."""
    pat = re.compile(rf"^- ({re.escape(prefix)}D?\d+ .*)$")
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = pat.match(line)
        if m:
            out.append(m.group(1))
    return tuple(out)
