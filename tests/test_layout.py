"""The package's layout (docs/architecture.md): no two modules import each other, directly or
through others, and no package imports one that imports it back, lazy imports inside
functions included; at most a dozen modules directly in rocmlint/; the runtime stays apart."""

from __future__ import annotations

import ast
from pathlib import Path

import rocmlint

PACKAGE = Path(rocmlint.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The rocmlint modules `name` imports anywhere in its text (inside functions too)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rsplit(".", 1)[0]
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            candidates = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name and candidate != "rocmlint":
                imported.add(candidate)
    return imported


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _room(module: str) -> str:
    """The room a module lives in: its package below rocmlint/, or the module itself."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_import_graph_reads_every_module():
    assert len(MODULES) > 60
    assert GRAPH["rocmlint.engine"] >= {"rocmlint.source", "rocmlint.catalog.loader", "rocmlint.fixes.edits"}


def test_no_module_imports_itself_back():
    assert _cycles(GRAPH) == []


def test_no_package_imports_one_that_imports_it_back():
    rooms: dict[str, set[str]] = {}
    for module, imported in GRAPH.items():
        room = _room(module)
        rooms.setdefault(room, set()).update(_room(m) for m in imported if _room(m) != room)
    assert _cycles(rooms) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_at_most_a_dozen_modules_directly_in_the_package():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 12, top


def test_the_runtime_imports_nothing_of_the_linter_but_the_target_table():
    for module, imported in GRAPH.items():
        if module.startswith("rocmlint.runtime"):
            outside = {m for m in imported if not m.startswith("rocmlint.runtime")}
            assert outside <= {"rocmlint.targets"}, (module, outside)
