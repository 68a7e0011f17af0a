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


def _modules(path: Path) -> set[str]:
    """The dotted names of the project modules ``path`` imports."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out |= {f"{node.module}.{a.name}" for a in node.names} | {node.module}
    return {m for m in out if m.split(".")[0] in OWN}


@pytest.mark.parametrize("layer", ["sims", "strategies"])
def test_a_game_imports_only_its_own_strategies(layer):
    """``sims.<game>`` reaches only ``strategies.<game>`` (its kernel and the
    view it writes, ``strategies.<game>.view``), and a strategy no other
    game's; ``strategies.weights`` is shared. A game's enums and view layout
    live with that game."""
    bad = {}
    for f in sorted((ROOT / layer).rglob("*.py")):
        rel = f.relative_to(ROOT / layer)
        game = rel.parts[0].removesuffix(".py").split("_")[0]  # suits_oracle.py: suits
        for m in _modules(f):
            parts = m.split(".")
            if parts[0] == "strategies" and len(parts) > 1 and parts[1] not in (game, "weights"):
                bad.setdefault(str(f.relative_to(ROOT)), []).append(m)
    assert not bad, f"a game imports another game's strategies: {bad}"
