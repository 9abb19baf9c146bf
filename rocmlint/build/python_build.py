"""Python that builds native code, as the ROCM3xx checks see it (a BuildView).

Two kinds of Python file hand flags to a GPU compiler: `setup.py` (`setup_py_view`, gated by
what the project model's reader, `rocmlint.build.setup_py`, says each build reaches) and the
other modules that build extensions: a just-in-time loader calling
`torch.utils.cpp_extension.load`, an op builder, a PEP 517 build backend, a script that runs
nvcc or hipcc. `is_build_helper` tells them from the rest by what they import and run; their
string literals become tokens and their `os.environ[...] = "..."` writes settings, each gated
as Python code is (`rocmlint.python.index`: platform tests on either side, callers that are all
gated). Tests are left out: a flag string there is test data, not a build.

setup.py also says which AMD targets it builds for in plain Python lists, which
`gfx_list_settings` turns into settings for ROCM302: `gpus = ["gfx90a", "gfx942"]`, its
appends (`gpus.append("gfx950")`, `gpus += [...]`, `gpus.extend(...)`), and the defaults of
`os.getenv("GPU_ARCHS", "gfx90a;gfx942")`. (A just-in-time loader's target list is often the
one GPU a kernel is written for, so helpers are not read for it.)
"""

from __future__ import annotations

import ast
import os
import re

from rocmlint.build.files import (
    BuildView, Setting, Token, extra_gate, join_gates, parse_dependency, vendored_reason, within_budget,
)

# Modules that build native extensions; `cpp_extension` also matches a project's own copy of
# PyTorch's (amd-aiter vendors one as `cpp_extension`).
_BUILD_MODULE = re.compile(
    r"^(?:torch\.utils\.cpp_extension|setuptools|distutils|Cython\.Build|pybind11\.setup_helpers|skbuild"
    r"|scikit_build_core|mesonpy)(?:\.|$)|(?:^|\.)cpp_extension$"
)
# What such a module's text must hold before it is parsed: an import of a build module, nvcc or
# hipcc inside a string, or one of the flag keywords (most Python files hold none of them).
_BUILD_TEXT = re.compile(
    r"^[ \t]*(?:from|import)[ \t]+(?:[\w.]*cpp_extension|setuptools|distutils|Cython\.Build|pybind11\.setup_helpers"
    r"|skbuild|scikit_build_core|mesonpy)\b|^[ \t]*from[ \t]+torch\.utils[ \t]+import[ \t]+[^\n]*cpp_extension"
    r"|[\"'][^\"'\n]*\b(?:nvcc|hipcc)\b|\b(?:extra_cuda_cflags|extra_compile_args|extra_cflags|extra_hip_cflags|nvcc_flags|cuda_cflags)[ \t]*=",
    re.MULTILINE,
)
# Words one of which every match of _BUILD_TEXT holds: a plain search for them first spares
# most files the expression, whose string alternative is tried at every quote of the file.
_BUILD_WORDS = ("cpp_extension", "setuptools", "distutils", "Cython", "pybind11", "skbuild", "scikit_build_core",
                "mesonpy", "nvcc", "hipcc", "cflags", "extra_compile_args")
# Keyword arguments that hand flags to a compiler (torch.utils.cpp_extension's `load`, setuptools'
# `Extension`, and the JIT builders modelled on them).
_FLAG_KEYWORDS = {"extra_cuda_cflags", "extra_compile_args", "extra_cflags", "extra_hip_cflags", "nvcc_flags", "cuda_cflags"}
_COMPILER = re.compile(r"(?:^|[/\s])(?:nvcc|hipcc)(?:$|[\s.])")
_TEST_DIRECTORIES = {"test", "tests", "testing"}
# Calls whose string arguments are messages for people, not words for a compiler.
_MESSAGE_CALLS = {"print", "warn", "warning", "info", "debug", "error", "exception", "critical", "log", "format"}


def is_test_file(path: str) -> bool:
    name = os.path.basename(path)
    parts = os.path.normpath(path).replace(os.sep, "/").split("/")[:-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(part.lower() in _TEST_DIRECTORIES for part in parts))


def may_be_build_helper(path: str, text: str) -> bool:
    """What a build helper's name and text must show before it is parsed (is_build_helper)."""
    return (os.path.basename(path) != "setup.py" and not is_test_file(path) and any(w in text for w in _BUILD_WORDS)
            and _BUILD_TEXT.search(text) is not None)


def is_build_helper(source) -> bool:
    """A Python module other than setup.py that builds native code: it imports a build
    module, names nvcc/hipcc in a string (a compiler it runs), or passes compiler flags by
    the keywords of extension builders (`extra_cuda_cflags=...`)."""
    if not may_be_build_helper(source.path, source.text):
        return False
    try:
        tree = source.python_tree
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(_BUILD_MODULE.search(a.name) for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module:
            if _BUILD_MODULE.search(node.module) or any(_BUILD_MODULE.search(f"{node.module}.{a.name}") for a in node.names):
                return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _COMPILER.search(node.value):
            return True
        if isinstance(node, ast.keyword) and node.arg in _FLAG_KEYWORDS:
            return True
    return False


# --- setup.py ------------------------------------------------------------------------------


def setup_py_view(view: BuildView, source) -> None:
    from rocmlint.build import BuildFacts
    from rocmlint.build.setup_py import read_setup_py

    try:
        tree = source.python_tree
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    path = os.path.abspath(source.path)
    facts, view.not_fully_read = within_budget(lambda budget: read_setup_py(path, os.path.dirname(path), source.text, None, budget))
    facts = facts or BuildFacts()
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    units: dict[int, int] = {}
    vendored = vendored_reason(path)
    dependency_strings = _setup_dependency_strings(tree)
    libraries = {
        id(element)
        for node in ast.walk(tree) if isinstance(node, ast.keyword) and node.arg == "libraries"
        for element in ast.walk(node.value) if isinstance(element, ast.Constant)
    }
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or node.end_lineno is None:
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.JoinedStr):
            continue  # part of an f-string: computed, not written out
        gate = join_gates(facts.gate((path, node.lineno, node.col_offset)), vendored)
        start, end = python_span(source, node)
        if id(node) in dependency_strings:
            extra = dependency_strings[id(node)]
            dependency = parse_dependency(node.value, start, end, join_gates(gate, extra_gate(extra) if extra else None))
            if dependency:
                view.dependencies.append(dependency)
            continue
        group = parent if isinstance(parent, (ast.List, ast.Tuple, ast.Set)) else node
        if id(group) not in units:
            units[id(group)] = view.next_unit()
        if id(node) in libraries:
            # `libraries=["cublas"]` is linked as -lcublas.
            view.tokens.append(Token("-l" + node.value, start, end, gate, units[id(group)]))
            continue
        plain = source.text[start:end] == node.value
        for word in re.finditer(r"\S+", node.value):
            span = (start + word.start(), start + word.end()) if plain else (start, end)
            view.tokens.append(Token(word.group(0), span[0], span[1], gate, units[id(group)]))
    for node in ast.walk(tree):
        setting = environ_setting(node)
        if setting:
            name, value_node = setting
            start, end = python_span(source, value_node)
            gate = facts.gate((path, value_node.lineno, value_node.col_offset))
            view.settings.append(Setting(name, value_node.value, start, end, gate, "env"))
    view.settings.extend(gfx_list_settings(
        tree, source, lambda node: join_gates(facts.gate((path, node.lineno, node.col_offset)), vendored)))


def python_span(source, node: ast.Constant) -> tuple[int, int]:
    """The span of a string literal's value where it is written out plainly, else the literal's."""
    start = source.offset(node.lineno, source.byte_col_to_char(node.lineno, node.col_offset))
    end = source.offset(node.end_lineno, source.byte_col_to_char(node.end_lineno, node.end_col_offset))
    raw = source.text[start:end]
    inner = raw.find(node.value) if node.value and "\n" not in raw else -1
    if inner >= 0:
        return start + inner, start + inner + len(node.value)
    return start, end


def environ_setting(node: ast.AST):
    """`os.environ["X"] = "v"` and `os.environ.setdefault("X", "v")`: (X, the value node)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if (isinstance(target, ast.Subscript) and _is_environ(target.value) and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return target.slice.value, node.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault"
            and _is_environ(node.func.value) and len(node.args) == 2
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)):
        return node.args[0].value, node.args[1]
    return None


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (isinstance(node, ast.Name) and node.id == "environ")


def _setup_dependency_strings(tree: ast.Module) -> dict[int, str | None]:
    """The string nodes that are requirements of `setup(install_requires=..., extras_require=...)`
    (followed through module-level names): node id -> the extra it belongs to, or None."""
    assigned: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = node.value
    found: dict[int, str | None] = {}

    def strings(node: ast.AST | None, extra: str | None, depth: int = 0) -> None:
        if node is None or depth > 3:
            return
        if isinstance(node, ast.Name) and node.id in assigned:
            strings(assigned[node.id], extra, depth + 1)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for element in node.elts:
                strings(element, extra, depth)
        elif isinstance(node, ast.BinOp):
            strings(node.left, extra, depth)
            strings(node.right, extra, depth)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found[id(node)] = extra

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name != "setup":
            continue
        for keyword in node.keywords:
            if keyword.arg in ("install_requires", "setup_requires"):
                strings(keyword.value, None)
            elif keyword.arg == "extras_require":
                value = keyword.value
                if isinstance(value, ast.Name) and value.id in assigned:
                    value = assigned[value.id]
                if isinstance(value, ast.Dict):
                    for key, item in zip(value.keys, value.values):
                        extra = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
                        strings(item, extra)
    return found


def _is_message(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """A docstring, or a string inside a `raise` or a print/log/warn call."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Expr):
        return True
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
        if isinstance(parent, ast.Raise):
            return True
        if isinstance(parent, ast.Call):
            func = parent.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _MESSAGE_CALLS:
                return True
        parent = parents.get(id(parent))
    return False


# A string that holds compiler words: an option (`-gencode=...`, `-O3`, `--offload-arch=...`)
# or the value of one (`arch=compute_90,code=sm_90`, `sm_90` after `-arch`).
_FLAG_LIKE = re.compile(r"(?:^|\s)-|(?:sm|compute)_\d")


def build_helper_view(view: BuildView, source) -> None:
    """Tokens and settings of a Python build helper (nothing for any other module)."""
    if not is_build_helper(source):
        return
    tree = source.python_tree
    index = source.python_index
    parents = index.parents  # the index's own map of every node's parent, built once
    vendored = vendored_reason(os.path.abspath(source.path))
    units: dict[int, int] = {}
    for node in ast.walk(tree):
        setting = environ_setting(node)
        if setting:
            name, value_node = setting
            start, end = python_span(source, value_node)
            view.settings.append(Setting(name, value_node.value, start, end, join_gates(index.gate(value_node), vendored), "env"))
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or node.end_lineno is None:
            continue
        if not _FLAG_LIKE.search(node.value):
            continue  # not a word for a compiler: a name, a path, a template (most strings here)
        parent = parents.get(id(node))
        if isinstance(parent, ast.JoinedStr) or _is_message(node, parents):
            continue
        gate = join_gates(index.gate(node), vendored)
        start, end = python_span(source, node)
        group = parent if isinstance(parent, (ast.List, ast.Tuple, ast.Set)) else node
        if id(group) not in units:
            units[id(group)] = view.next_unit()
        plain = source.text[start:end] == node.value
        for word in re.finditer(r"\S+", node.value):
            span = (start + word.start(), start + word.end()) if plain else (start, end)
            view.tokens.append(Token(word.group(0), span[0], span[1], gate, units[id(group)]))


# --- AMD target lists written as Python ---------------------------------------------------------

_GFX_NAME = re.compile(r"^gfx[0-9a-f]{3,4}(?:[:-][\w+-]*)?$", re.IGNORECASE)
_GFX_IN_TEXT = re.compile(r"gfx[0-9a-f]{3,4}", re.IGNORECASE)


def _target_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _gfx_strings(node: ast.AST) -> list[ast.Constant] | None:
    """The string elements of a list/tuple/set literal (or a lone string) that are all gfx
    names, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node] if _GFX_IN_TEXT.search(node.value) else None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and node.elts:
        strings = [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if strings and all(_GFX_NAME.match(s.value.strip()) or s.value in ("native",) for s in strings) \
                and any(_GFX_NAME.match(s.value.strip()) for s in strings):
            return strings
    return None


def _getenv_default(node: ast.AST) -> tuple[str, ast.Constant] | None:
    """`os.getenv("NAME", "gfx...")` / `os.environ.get("NAME", "gfx...")`: (NAME, the default)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) == 2):
        return None
    func = node.func
    getenv = func.attr == "getenv" or (func.attr == "get" and isinstance(func.value, ast.Attribute) and func.value.attr == "environ")
    name, default = node.args
    if getenv and isinstance(name, ast.Constant) and isinstance(name.value, str) \
            and isinstance(default, ast.Constant) and isinstance(default.value, str) and _GFX_IN_TEXT.search(default.value):
        return name.value, default
    return None


def gfx_list_settings(tree: ast.AST, source, gate_of) -> list:
    """Settings (kind "python") for the AMD target lists a Python build file writes out:
    assignments of gfx lists (and their appends) to a name, and `os.getenv` defaults.
    `gate_of(node)` says why a node is gated."""
    settings = []

    def add(name: str, strings: list[ast.Constant]) -> None:
        first, last = python_span(source, strings[0]), python_span(source, strings[-1])
        value = ";".join(s.value for s in strings)
        settings.append(Setting(name, value, first[0], last[1], gate_of(strings[0]), "python"))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            strings = _gfx_strings(node.value)
            if isinstance(node.value, ast.BinOp):  # `archs = archs + ["gfx950"]`
                strings = _gfx_strings(node.value.right)
            for target in targets:
                name = _target_name(target)
                if name and strings:
                    add(name, strings)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend", "insert"):
            name = _target_name(node.func.value)
            argument = node.args[-1] if node.args else None
            strings = _gfx_strings(argument) if argument is not None else None
            if name and strings:
                add(name, strings)
        default = _getenv_default(node)
        if default:
            add(default[0], [default[1]])
    return settings
