"""Imports run one way: ``balance`` → ``sims`` → ``strategies`` → ``kernels``.

Read from the sources (every import statement, including those inside
functions), so a cycle between the folders cannot come back unnoticed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests import ROOT

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


# ---- the core never names a game; balance/ has no import cycle ------------------------
GAME_NAMES = ("tosk", "clash", "trisk", "suits")
# a string that picks a game: its name alone, or a path or module of it (a help
# text may still say "e.g. results/tosk"; that is an example, not a branch)
_ALT = "|".join(GAME_NAMES)
NAMING = re.compile(
    rf"^({_ALT})$|balance\.games\.|(configs|strategies)/({_ALT})\b|\b(sims|strategies)\.({_ALT})\b"
)


def _core_files() -> list[Path]:
    return [
        f
        for f in sorted((ROOT / "balance").rglob("*.py"))
        if "games" not in f.relative_to(ROOT).parts
    ]


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def test_the_core_never_names_a_game():
    """Outside ``balance/games/`` no code imports a game's home or holds a game's
    name in a string (docstrings and comments may use one as an example): a
    fifth game touches nothing but its own folder."""
    bad = []
    for f in _core_files():
        tree = ast.parse(f.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if f.name == "registry.py":  # the registry finds the homes: that is its job
                pass
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "balance.games"
            ):
                bad.append(f"{f.relative_to(ROOT)}:{node.lineno} imports {node.module}")
            elif isinstance(node, ast.Import):
                bad += [
                    f"{f.relative_to(ROOT)}:{node.lineno} imports {a.name}"
                    for a in node.names
                    if a.name.startswith("balance.games")
                ]
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
            ):
                if NAMING.search(node.value):
                    bad.append(f"{f.relative_to(ROOT)}:{node.lineno} names a game: {node.value!r}")
    assert not bad, "\n".join(bad)


def _module_name(f: Path) -> str:
    parts = list(f.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def test_balance_has_no_import_cycle():
    """Module-level imports between ``balance`` modules form no cycle (imports
    inside functions are how the CLI stays quick to start, and are not counted)."""
    files = sorted((ROOT / "balance").rglob("*.py"))
    names = {_module_name(f): f for f in files}
    graph: dict[str, set[str]] = {}
    for name, f in names.items():
        tree = ast.parse(f.read_text(encoding="utf-8"))
        deps = set()
        # module level only: an ``if TYPE_CHECKING:`` block is not run, so not walked
        for s in tree.body:
            if isinstance(s, ast.ImportFrom) and s.level == 0 and s.module:
                mods = [s.module] + [f"{s.module}.{a.name}" for a in s.names]
            elif isinstance(s, ast.Import):
                mods = [a.name for a in s.names]
            else:
                continue
            deps |= {m for m in mods if m in names and m != name}
        graph[name] = deps
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> None:
        seen[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if seen.get(m) == 1:
                cycle = stack[stack.index(m) :] + [m]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if m not in seen:
                visit(m)
        stack.pop()
        seen[n] = 2

    for n in sorted(graph):
        if n not in seen:
            visit(n)


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
