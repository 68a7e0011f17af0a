"""Imports run one way: ``balance`` → ``sims`` → ``strategies`` → ``kernels``.

Read from the sources (every import statement, including those inside
functions), so a cycle between the folders cannot come back unnoticed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# what each layer may import from the project's own packages
ALLOWED = {
    "kernels": {"kernels"},
    "strategies": {"strategies", "kernels"},
    "sims": {"sims", "strategies", "kernels"},
}
OWN = {"balance", "sims", "strategies", "kernels"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out & OWN


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_the_layers_below_it(layer):
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files
    bad = {str(f.relative_to(ROOT)): sorted(_imports(f) - ALLOWED[layer]) for f in files}
    bad = {f: names for f, names in bad.items() if names}
    assert not bad, f"{layer}/ imports what lies above it: {bad}"
