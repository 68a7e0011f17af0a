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


@pytest.mark.slow  # 1.4 s on a 2-core VM (issue 46, round 5)
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


@pytest.mark.slow  # 1.05-1.3 s on a 2-core VM (issue 46, round 5)
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


def _every_import(name: str, path: Path, names: set[str]) -> set[str]:
    """The ``balance`` modules that ``name`` (at ``path``) imports anywhere in
    its source, inside functions too (an ``if TYPE_CHECKING:`` block is never
    run, so not counted). ``from P import m`` of a submodule ``m`` counts as
    importing ``P.m``; a package's own parents are imported for every module
    of it, so an import of one is no edge."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip: set[int] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for s in node.body for n in ast.walk(s)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rpartition(".")[0]
            module = node.module or ""
            if node.level:
                module = f"{base}.{module}" if module else base
            for a in node.names:
                sub = f"{module}.{a.name}"
                out.add(sub if sub in names else module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    return {m for m in out if m in names and m != name and m not in parents}


def _import_graph() -> dict[str, set[str]]:
    files = {_module_name(f): f for f in sorted((ROOT / "balance").rglob("*.py"))}
    return {n: _every_import(n, f, set(files)) for n, f in files.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's),
    each sorted: every import cycle lies within one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@pytest.mark.slow  # parses every module of balance (about 1.4 s)
def test_no_balance_module_imports_one_that_imports_it_back():
    """Counting every import, those inside functions too (deferred to keep the
    CLI quick to start, but still a dependency), no ``balance`` module reaches
    itself again: no circle, however long. The two there were
    (``cli.game`` ⇄ ``cli.repair`` over ``_save_figure``, now
    ``cli.output.save_figure``; ``executor`` ⇄ ``runner`` over ``play_batch``,
    now passed to the executor) are checked by name below."""
    graph = _import_graph()
    assert not _cycles(graph), f"import cycles: {_cycles(graph)}"
    for a, b in (
        ("balance.cli.game", "balance.cli.repair"),
        ("balance.executor", "balance.runner"),
    ):
        assert a in graph and b in graph  # the check names real modules
        assert not (b in graph[a] and a in graph[b]), f"{a} and {b} import each other"


def test_the_cycle_check_finds_a_cycle():
    """The check above can fail: a circle of three, and one through a
    function-level import, are found."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    tree = {"balance.x": {"balance.y"}, "balance.y": {"balance.x"}}
    assert _cycles(tree) == [["balance.x", "balance.y"]]


def test_the_import_graph_reads_function_level_and_submodule_imports(tmp_path):
    """``_every_import`` counts an import inside a function, resolves
    ``from P import m`` to the submodule, skips ``TYPE_CHECKING`` blocks and
    the module's own parent packages."""
    src = tmp_path / "m.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "from balance import cli\n"
        "if TYPE_CHECKING:\n"
        "    from balance import store\n"
        "def f():\n"
        "    from balance.runner import play_batch\n"
        "    from . import game\n",
        encoding="utf-8",
    )
    names = {"balance", "balance.cli", "balance.cli.m", "balance.cli.game", "balance.runner"}
    names |= {"balance.store"}
    assert _every_import("balance.cli.m", src, names) == {"balance.runner", "balance.cli.game"}
