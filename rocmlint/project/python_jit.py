"""C/C++ files a project compiles just in time from Python, and whether a ROCm run gets there.

Projects such as SGLang keep kernels in `.cuh` files that a Python module hands to a JIT
loader (`load_jit("awq", cuda_files=["gemm/awq_dequantize.cuh"])`) and import that module only
under an NVIDIA test (`if _is_cuda: from sglang.jit_kernel.awq_dequantize import ...`). No build
file names those kernels; the imports say who compiles them. A kernel file that only such
modules name, imported (outside tests and benchmarks) only on the NVIDIA side of a platform
test, is CUDA-only. Nothing is imported or run: the modules are read with `ast`.
"""

from __future__ import annotations

import ast
import os
import re

from rocmlint.python.imports import dotted_name, import_statements

# Keyword arguments that hand C/C++ source files to a JIT build.
_SOURCE_KEYWORDS = frozenset({"cuda_files", "cpp_files", "cuda_sources", "cpp_sources", "sources"})
_SOURCE_SUFFIX = re.compile(r"\.(?:cu|cuh|cpp|cc|cxx|h|hpp|hip)$")
_AMD_WORD = re.compile(r"(?i)hip|rocm|amd")
_NVIDIA_WORD = re.compile(r"(?i)cuda|nvidia")
_NOT_A_STACK = re.compile(r"(?i)cuda_?alike|cuda_?like|is_available|cuda_home|device_count")
_OUTSIDE_PRODUCT = re.compile(r"(?:^|/)(?:tests?|benchmarks?|examples?|docs?)(?:/|$)|(?:^|/)test_[^/]*\.py$|_test\.py$")


def jit_cuda_only(root: str, python_files: list[str], sources: list[str], text_of) -> dict[str, str]:
    """Absolute C/C++ path -> why only the CUDA side compiles it (see the module docstring)."""
    by_name: dict[str, list[str]] = {}
    for source in sources:
        by_name.setdefault(os.path.basename(source), []).append(source)
    named: dict[str, list[tuple[str, int]]] = {}  # C/C++ file -> (builder module file, line)
    trees: dict[str, ast.AST] = {}
    for path in python_files:
        text = text_of(path)
        if not text or not any(keyword + "=" in text for keyword in _SOURCE_KEYWORDS):
            continue
        tree = _parse(text, path)
        if tree is None:
            continue
        trees[path] = tree
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for keyword in node.keywords:
                if keyword.arg not in _SOURCE_KEYWORDS or not isinstance(keyword.value, (ast.List, ast.Tuple)):
                    continue
                for element in keyword.value.elts:
                    if isinstance(element, ast.Constant) and isinstance(element.value, str) and _SOURCE_SUFFIX.search(element.value):
                        for target in _tail_matches(element.value, by_name):
                            named.setdefault(target, []).append((path, element.lineno))
    if not named:
        return {}
    builders = {builder for entries in named.values() for builder, _ in entries}
    sides = _import_sides(root, builders, python_files, text_of, trees)
    verdicts: dict[str, str] = {}
    for target, entries in named.items():
        sites = [site for builder, _ in entries for site in sides.get(builder, [])]
        if sites and all(side == "nvidia" for side, _ in sites):
            builder, line = entries[0]
            _, where = sites[0]
            verdicts[target] = (
                f"CUDA-only: compiled just in time by {_relative(root, builder)}:{line}, which the project "
                f"imports only on the NVIDIA side ({where})"
            )
    return verdicts


def _import_sides(root: str, builders: set[str], python_files: list[str], text_of, trees: dict) -> dict[str, list]:
    """For each builder module file: (side of the platform test around it or None, where) for
    each import of its module outside tests and benchmarks. One read of each Python file."""
    modules = {builder: _module_name(builder) for builder in builders}
    leaves = {module.rsplit(".", 1)[-1] for module in modules.values() if module}
    sides: dict[str, list] = {builder: [] for builder in builders}
    if not leaves:
        return sides
    for path in python_files:
        if _OUTSIDE_PRODUCT.search(os.path.relpath(path, root).replace(os.sep, "/")):
            continue
        text = text_of(path)
        if not text or not any(_on_an_import_line(text, leaf) for leaf in leaves):
            continue
        tree = trees.get(path) or _parse(text, path)
        if tree is None:
            continue
        parents = None
        importer_package = _module_name(path)
        for node in import_statements(tree):
            for builder, module in modules.items():
                if module and builder != path and _imports(node, module, importer_package):
                    if parents is None:
                        parents = _statement_parents(tree)
                    sides[builder].append((_side_of(node, parents), f"{_relative(root, path)}:{node.lineno}"))
    return sides


_IMPORT_WORD = re.compile(r"\bimport\b")


def _on_an_import_line(text: str, name: str) -> bool:
    """Does `name` stand as a word on a line that holds the word `import`? A plain search for
    the name, then a look at its line (an expression for all names at once was tried at every
    position of every file)."""
    at = text.find(name)
    while at != -1:
        end = at + len(name)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", end)
            if _IMPORT_WORD.search(text, line_start, line_end if line_end != -1 else len(text)):
                return True
        at = text.find(name, at + 1)
    return False


def _imports(node: ast.AST, module: str, importer: str | None) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name == module or alias.name.startswith(module + ".") for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            if importer is None:
                return False
            package = importer.rsplit(".", node.level)[0] if importer.count(".") >= node.level else ""
            base = f"{package}.{base}".strip(".") if base else package
        if base == module:
            return True
        return any(f"{base}.{alias.name}" == module for alias in node.names)
    return False


def _statement_parents(tree: ast.AST) -> dict[int, ast.AST]:
    """id(statement) -> the statement (or module) whose body holds it. Only statements are
    walked: an import's platform tests are the statements around it, and a whole tree's
    expressions are most of its nodes."""
    parents: dict[int, ast.AST] = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                for child in children:
                    parents[id(child)] = node
                    stack.append(child)
    return parents


def _side_of(node: ast.AST, parents: dict) -> str | None:
    """"nvidia" or "amd" when the innermost platform test around `node` decides it, else None."""
    child, parent = node, parents.get(id(node))
    while parent is not None:
        if isinstance(parent, ast.If) and child is not parent.test:
            side = _test_side(parent.test)
            if side is not None:
                return side if any(child is s for s in parent.body) else _flip(side)
        child, parent = parent, parents.get(id(parent))
    return None


def _test_side(test: ast.AST) -> str | None:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _flip(_test_side(test.operand))
    if isinstance(test, ast.BoolOp):
        sides = [_test_side(value) for value in test.values]
        if isinstance(test.op, ast.And):
            known = {s for s in sides if s is not None}
            return known.pop() if len(known) == 1 else None
        return sides[0] if sides and all(s == sides[0] for s in sides) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        side = _test_side(test.left)
        return side if isinstance(test.ops[0], ast.IsNot) else _flip(side) if isinstance(test.ops[0], ast.Is) else None
    name = dotted_name(test.func if isinstance(test, ast.Call) else test)
    if name is None or _NOT_A_STACK.search(name):
        return None
    if _AMD_WORD.search(name):
        return "amd"
    if _NVIDIA_WORD.search(name):
        return "nvidia"
    return None


def _flip(side: str | None) -> str | None:
    return {"nvidia": "amd", "amd": "nvidia"}.get(side) if side else None


def _module_name(path: str) -> str | None:
    """`.../sglang/jit_kernel/awq.py` -> `sglang.jit_kernel.awq`, up the package directories."""
    directory, name = os.path.split(path)
    parts = [os.path.splitext(name)[0]]
    if parts[0] == "__init__":
        parts = []
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parts.append(os.path.basename(directory))
        directory = os.path.dirname(directory)
    return ".".join(reversed(parts)) or None


def _tail_matches(text: str, by_name: dict[str, list[str]]) -> list[str]:
    tail = os.path.normpath(text).replace(os.sep, "/").lstrip("./")
    return [p for p in by_name.get(os.path.basename(tail), []) if p.replace(os.sep, "/").endswith("/" + tail)]


def _parse(text: str, path: str) -> ast.AST | None:
    try:
        return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _relative(root: str, path: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")
