"""No import cycle among the project's modules, counting imports inside functions too.

A function-level import can hide a cycle from the interpreter (``model`` once
imported ``ranking`` inside ``Run.pair_keys`` while ``ranking`` imported
``model``), but the two modules still cannot be understood, tested or moved
apart.  The graph is read from the source with ``ast``: every ``import``,
wherever it stands, is an edge.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("trec_bridge", "converters")


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom, mods: dict[str, Path]) -> list[str]:
    """The project modules an import statement loads (a submodule named in ``from pkg import sub`` counts as
    itself, not as its package)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if node.level:
        base = package[: len(package) - node.level + 1]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    subs = [f"{prefix}.{a.name}" for a in node.names if f"{prefix}.{a.name}" in mods]
    return subs if len(subs) == len(node.names) else [prefix, *subs]


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph = {}
    for module, path in mods.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps.update(t for t in _targets(module, path, node, mods) if t in mods and t != module)
        graph[module] = deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_graph_sees_function_level_imports_and_cycles():
    """The checker itself: a cycle closed only by an import inside a function is found."""
    graph = import_graph()
    assert "trec_bridge.ordering" in graph["trec_bridge.model"]
    assert "converters.trec_run" in graph["converters.detect"]  # imported inside load_run_any
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None

