"""What "already gated" means, for every check.

Code that only runs on one platform was written with ROCm in mind and must not be flagged:
precision on half-ported code bases depends on this module.

Python: a statement is gated when it sits under an ``if``/``elif``/``else`` (or a conditional
expression) whose test asks which GPU stack is in use (``torch.version.hip``,
``torch.version.cuda``, ``is_rocm()``, ``IS_HIP``, ``current_platform.is_rocm()``, ...) — both
sides count — or after an early exit on such a test in the same block, or under
``if TYPE_CHECKING:``. Imports inside a ``try`` body that has an ``except`` clause, or inside
``with contextlib.suppress(...)``, are gated for import checks.

C/C++: a line is gated when it sits inside a preprocessor conditional chain that has tested a
ROCm/HIP macro (``USE_ROCM``, ``__HIP_PLATFORM_AMD__``, ``__HIPCC__``, ``__HIP__``, ...) in
that branch or an earlier one of the same chain — so ``#else`` of ``#ifdef USE_ROCM`` counts —
or inside ``#if 0``.
"""

from __future__ import annotations

import ast
import re

# Identifier parts that name a GPU software stack. "cuda" alone is not one of them: tensors'
# `.is_cuda` and `torch.cuda.is_available()` are true on ROCm builds of PyTorch as well.
_PLATFORM_PARTS = {"rocm", "hip", "hipcc", "amd", "amdgpu", "amdgcn", "hcc", "nvidia", "nvcc"}
_PLATFORM_STRINGS = {"rocm", "hip", "amd", "nvidia"}
# Qualified names that tell the stack apart: `torch.version.hip` is None on CUDA builds,
# `torch.version.cuda` is None on ROCm builds (pytorch/pytorch#97013).
_PLATFORM_ATTR_SUFFIXES = ("version.hip", "version.cuda", "platform.is_cuda", "platform.is_cuda_alike")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def names_platform(identifier: str) -> bool:
    """True when an identifier names a GPU stack: is_rocm, IS_HIP, use_rocm, __HIPCC__, isHip."""
    lower = identifier.lower()
    if "rocm" in lower:
        return True
    parts = {p for p in re.split(r"[^a-z0-9]+", lower) if p}
    parts.update(p.lower() for p in _CAMEL.findall(identifier))
    return bool(parts & _PLATFORM_PARTS) or any(p.startswith("gfx") and p[3:4].isdigit() for p in parts)


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def is_platform_test(test: ast.AST) -> bool:
    """Does this condition ask which GPU stack is in use?"""
    for node in ast.walk(test):
        if isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted and dotted.endswith(_PLATFORM_ATTR_SUFFIXES):
                return True
            if names_platform(node.attr):
                return True
        elif isinstance(node, ast.Name):
            if names_platform(node.id) or node.id == "TYPE_CHECKING":
                return True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.lower() in _PLATFORM_STRINGS:
                return True
    return False


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def _is_suppress_with(node: ast.With) -> bool:
    for item in node.items:
        call = item.context_expr
        if isinstance(call, ast.Call):
            name = _dotted(call.func) or ""
            if name == "suppress" or name.endswith(".suppress"):
                return True
    return False


def python_gated(node: ast.AST, parents: dict[int, ast.AST], *, import_guard: bool = False) -> bool:
    """Is `node` under a platform gate? With import_guard, try/except and suppress() count too.

    `parents` maps id(child) -> parent for the whole module (see PythonIndex).
    """
    child = node
    parent = parents.get(id(child))
    while parent is not None:
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
            if is_platform_test(parent.test):
                return True
        elif isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
            # `is_rocm() or torch.compile(...)`, `not IS_HIP and import_module("pynvml")`
            earlier = parent.values[: parent.values.index(child)] if child in parent.values else []
            if any(is_platform_test(v) for v in earlier):
                return True
        elif import_guard and isinstance(parent, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            if parent.handlers and any(child is s for s in parent.body):
                return True
        elif import_guard and isinstance(parent, ast.With) and _is_suppress_with(parent):
            return True
        # An early exit on a platform test earlier in the same block gates what follows:
        #   if torch.version.hip: return fallback()
        for block in ("body", "orelse", "finalbody"):
            statements = getattr(parent, block, None)
            if isinstance(statements, list) and any(child is s for s in statements):
                for earlier in statements[: next(i for i, s in enumerate(statements) if s is child)]:
                    if isinstance(earlier, ast.If) and is_platform_test(earlier.test):
                        if _exits(earlier.body) or _exits(earlier.orelse):
                            return True
        child, parent = parent, parents.get(id(parent))
    return False


# --- C/C++ preprocessor regions ------------------------------------------------------------

_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def condition_names_platform(condition: str) -> bool:
    condition = re.sub(r"//.*|/\*.*?\*/", " ", condition)
    return any(names_platform(word) for word in _IDENT.findall(condition) if word != "defined")


class PreprocessorGates:
    """Which lines sit inside a ROCm/HIP-gated (or `#if 0`) preprocessor region."""

    def __init__(self, text: str):
        lines = text.split("\n")
        self._gated = [False] * (len(lines) + 2)
        # Each open conditional chain: [gated_so_far, gated_because_of_if0_branch]
        stack: list[list[bool]] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            start = i
            # Join backslash continuations of directives.
            while line.endswith("\\") and i + 1 < len(lines) and _DIRECTIVE.match(lines[start]):
                i += 1
                line = line[:-1] + " " + lines[i]
            directive = _DIRECTIVE.match(line)
            inside = any(frame[0] or frame[1] for frame in stack)
            if directive:
                keyword, rest = directive.group(1), directive.group(2)
                if keyword in ("if", "ifdef", "ifndef"):
                    stack.append([condition_names_platform(rest), keyword == "if" and rest.strip() == "0"])
                elif keyword in ("elif", "elifdef", "elifndef") and stack:
                    stack[-1][0] = stack[-1][0] or condition_names_platform(rest)
                    stack[-1][1] = False
                elif keyword == "else" and stack:
                    stack[-1][1] = False
                elif keyword == "endif" and stack:
                    stack.pop()
                inside = inside or any(frame[0] or frame[1] for frame in stack)
            for j in range(start, i + 1):
                self._gated[j + 1] = inside
            i += 1

    def is_gated(self, line: int) -> bool:
        return 0 < line < len(self._gated) and self._gated[line]
