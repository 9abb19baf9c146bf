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
or inside a branch that HIP-Clang never compiles: ``#if 0``, or one that needs a macro only
NVIDIA's compilers define (``#if __CUDA_ARCH__ >= 800``, the ``#else`` of
``#if !defined(__CUDA_ARCH__)``). Include guards are never gates.
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

_DIRECTIVE = re.compile(r"\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)", re.S)
_DEFINE = re.compile(r"\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)")
_GUARD_TEST = re.compile(r"^\s*(?:!\s*defined\s*\(?\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)?\s*$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Words of a condition that are operators or keywords, never macro names.
_CONDITION_KEYWORDS = {"defined", "__has_include", "__has_include_next", "__has_builtin", "__has_attribute"}
# CPU-architecture macros that contain "amd" (`__amd64__`, `_M_AMD64`) say nothing about GPUs.
_CPU_ARCH = re.compile(r"amd64", re.IGNORECASE)


def _is_gpu_platform_macro(word: str) -> bool:
    return word not in _CONDITION_KEYWORDS and names_platform(word) and not _CPU_ARCH.search(word)


def condition_names_platform(condition: str) -> bool:
    """Does a preprocessor condition (comments already removed or not) test a GPU stack macro?"""
    condition = re.sub(r"//.*|/\*.*?\*/", " ", condition)
    return any(_is_gpu_platform_macro(word) for word in _IDENT.findall(condition))


# Macros that only NVIDIA's compilers define. HIP-Clang leaves them undefined in both its host
# and device passes (clang defines __CUDA_ARCH__ and __CUDA__ for CUDA only, never for HIP:
# llvm/llvm-project D45441, clang/lib/Frontend/InitPreprocessor.cpp), so a branch that needs
# one of them is never compiled for AMD GPUs, whatever its author had in mind.
_NVIDIA_COMPILER_ONLY = re.compile(
    r"^(__CUDA_ARCH__|__CUDA_ARCH_[A-Z0-9_]+|__CUDACC_VER_[A-Z]+__|__CUDACC_RDC__|__NVCC__|__CUDA__|"
    r"__NVPTX__|__NVCOMPILER|__NVCOMPILER_CUDA__)$"
)
_TOKEN = re.compile(
    r"\s*(?:(?P<number>0[xX][0-9a-fA-F']+|\d[\d']*)[uUlLzZ]*"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:(),]))"
)
_BINARY = {  # operator: (precedence, function of two known ints)
    "||": (1, None),
    "&&": (2, None),
    "|": (3, lambda a, b: a | b),
    "^": (4, lambda a, b: a ^ b),
    "&": (5, lambda a, b: a & b),
    "==": (6, lambda a, b: int(a == b)),
    "!=": (6, lambda a, b: int(a != b)),
    "<": (7, lambda a, b: int(a < b)),
    ">": (7, lambda a, b: int(a > b)),
    "<=": (7, lambda a, b: int(a <= b)),
    ">=": (7, lambda a, b: int(a >= b)),
    "<<": (8, lambda a, b: a << b if 0 <= b < 64 else None),
    ">>": (8, lambda a, b: a >> b if 0 <= b < 64 else None),
    "+": (9, lambda a, b: a + b),
    "-": (9, lambda a, b: a - b),
    "*": (10, lambda a, b: a * b),
    "/": (10, lambda a, b: int(a / b) if b else None),
    "%": (10, lambda a, b: a - b * int(a / b) if b else None),
}


class _Unparsable(Exception):
    pass


class _ConditionUnderHip:
    """The value of a #if condition as HIP-Clang sees it on AMD, where it can be known.

    NVIDIA-compiler-only macros are undefined (0), `true`/`false` and integer literals are
    themselves, and every other macro is unknown (None): it may be defined on the command line
    or in a header. `&&`, `||` and `?:` short-circuit on known values, so
    `defined(__CUDA_ARCH__) && FOO` is known to be 0 and `!defined(__CUDA_ARCH__) || FOO` 1.
    """

    def __init__(self, condition: str):
        self.tokens: list[tuple[str, str]] = []
        position = 0
        text = condition.strip()
        while position < len(text):
            if text[position] == "<" and self.tokens and self.tokens[-1] == ("op", "("):
                # `__has_include(<hip/hip_runtime.h>)`: the header name is one opaque token.
                close = text.find(">", position)
                if close < 0:
                    raise _Unparsable
                self.tokens.append(("header", text[position : close + 1]))
                position = close + 1
                continue
            token = _TOKEN.match(text, position)
            if not token or token.end() == position:
                if text[position:].strip() == "":
                    break
                raise _Unparsable
            kind = token.lastgroup
            self.tokens.append((kind, token.group(kind)))
            position = token.end()
        self.index = 0

    @classmethod
    def value(cls, condition: str) -> int | None:
        try:
            parser = cls(condition)
            result = parser._expression(0)
            if parser.index != len(parser.tokens):
                return None
            return result
        except (_Unparsable, IndexError, RecursionError):
            return None

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.index]
        if expected is not None and token[1] != expected:
            raise _Unparsable
        self.index += 1
        return token

    def _expression(self, min_precedence: int) -> int | None:
        left = self._unary()
        while True:
            token = self._peek()
            if token is None or token[0] != "op":
                return left
            if token[1] == "?" and min_precedence == 0:
                self._take()
                then = self._expression(0)
                self._take(":")
                otherwise = self._expression(0)
                if left is None:
                    left = then if then == otherwise else None
                else:
                    left = then if left else otherwise
                continue
            if token[1] not in _BINARY or _BINARY[token[1]][0] < min_precedence:
                return left
            precedence, function = _BINARY[token[1]]
            self._take()
            right = self._expression(precedence + 1)
            if token[1] == "&&":
                left = 0 if (left == 0 or right == 0) else (1 if left is not None and right is not None else None)
            elif token[1] == "||":
                known_true = (left is not None and left != 0) or (right is not None and right != 0)
                left = 1 if known_true else (0 if left == 0 and right == 0 else None)
            else:
                left = None if left is None or right is None else function(left, right)

    def _unary(self) -> int | None:
        kind, text = self._take()
        if kind == "op":
            if text == "(":
                inner = self._expression(0)
                self._take(")")
                return inner
            operand = self._unary()
            if operand is None:
                return None
            if text == "!":
                return int(not operand)
            if text == "~":
                return ~operand
            if text == "-":
                return -operand
            if text == "+":
                return operand
            raise _Unparsable
        if kind == "number":
            digits = text.replace("'", "")
            if digits[:2].lower() == "0x":
                return int(digits, 16)
            return int(digits, 8) if digits.startswith("0") and len(digits) > 1 else int(digits)
        if kind == "ident":
            if text == "defined":
                parenthesised = self._peek() == ("op", "(")
                if parenthesised:
                    self._take()
                name = self._take()[1]
                if parenthesised:
                    self._take(")")
                return 0 if _NVIDIA_COMPILER_ONLY.match(name) else None
            if self._peek() == ("op", "("):
                self._skip_arguments()  # a function-like macro or __has_include(...)
                return None
            if text in ("true", "false"):
                return int(text == "true")
            return 0 if _NVIDIA_COMPILER_ONLY.match(text) else None
        raise _Unparsable

    def _skip_arguments(self) -> None:
        depth = 0
        while True:
            _, text = self._take()
            if text == "(":
                depth += 1
            elif text == ")":
                depth -= 1
                if depth == 0:
                    return


def _condition_value(keyword: str, condition: str) -> int | None:
    """The value of a branch's condition under HIP-Clang (None: unknown); None for #else."""
    if keyword in ("ifdef", "elifdef"):
        condition = f"defined({condition.strip()})"
    elif keyword in ("ifndef", "elifndef"):
        condition = f"!defined({condition.strip()})"
    elif keyword not in ("if", "elif"):
        return None
    return _ConditionUnderHip.value(condition)


class _Chain:
    """One open #if/#elif/#else/#endif chain."""

    __slots__ = ("platform", "dead", "taken")

    def __init__(self, platform: bool, value: int | None):
        self.platform = platform  # a branch of this chain so far has tested a GPU stack macro
        self.dead = value == 0  # HIP-Clang never compiles the current branch
        self.taken = bool(value)  # HIP-Clang always takes an earlier (or the current) branch

    def next_branch(self, platform: bool, value: int | None, is_else: bool) -> None:
        self.platform = self.platform or platform
        self.dead = self.taken or (not is_else and value == 0)
        self.taken = self.taken or bool(value)


class PreprocessorGates:
    """Which lines sit inside a ROCm/HIP-gated preprocessor region, or in a branch that
    HIP-Clang never compiles.

    A chain is a gate from the first branch whose condition names a GPU stack macro
    (`USE_ROCM`, `__HIP_PLATFORM_AMD__`, `__HIPCC__`, `__HIP__`, `__NVCC__`, ...) to its
    `#endif`: `#ifdef USE_ROCM` gates both of its sides, and `#if A` / `#elif defined(__HIP__)`
    leaves the `#if A` branch ungated. Apart from that, a single branch is gated when its
    condition is known to be false under HIP-Clang (`#if 0`, `#ifdef __CUDA_ARCH__`,
    `#if __CUDA_ARCH__ >= 800`), or an earlier branch is known to be taken there (the `#else`
    of `#if !defined(__CUDA_ARCH__)`); the `#else` of `#if __CUDA_ARCH__ >= 800` is what AMD
    compiles and stays ungated. Nested chains inside a gate are gated. Directives are
    read from the code only: comments and string literals (raw strings too) can neither open
    nor close a region, and a comment inside a condition is ignored. An include guard
    (`#ifndef HIP_UTILS_H` followed by `#define HIP_UTILS_H`) is not a gate whatever its name.
    """

    def __init__(self, text: str):
        from rocmlint.cuda_syntax import blank_both

        # Directives are found in code-only text; their conditions keep string literals, so
        # `__has_include("hip/hip_runtime.h")` still names HIP.
        raw_lines = text.split("\n")
        code, code_and_strings = blank_both(text)
        code_lines = code.split("\n")
        condition_lines = code_and_strings.split("\n")
        count = len(code_lines)
        self._gated = [False] * (count + 2)
        stack: list[_Chain] = []
        i = 0
        while i < count:
            start = i
            directive = _DIRECTIVE.match(code_lines[i])
            condition = ""
            if directive:
                # A directive continues over lines that end in a backslash (trailing spaces
                # allowed, as GCC and Clang do; a comment after it ends the line).
                parts = [condition_lines[i]]
                while raw_lines[i].rstrip().endswith("\\") and i + 1 < count:
                    parts[-1] = parts[-1].rstrip()[:-1]
                    i += 1
                    parts.append(condition_lines[i])
                logical = _DIRECTIVE.match(" ".join(parts))
                condition = logical.group(2) if logical else ""
            inside = any(chain.platform or chain.dead for chain in stack)
            if directive:
                keyword = directive.group(1)
                if keyword in ("if", "ifdef", "ifndef"):
                    platform = condition_names_platform(condition) and not self._include_guard(
                        keyword, condition, code_lines, i + 1
                    )
                    stack.append(_Chain(platform, _condition_value(keyword, condition)))
                elif keyword in ("elif", "elifdef", "elifndef") and stack:
                    stack[-1].next_branch(
                        condition_names_platform(condition), _condition_value(keyword, condition), False
                    )
                elif keyword == "else" and stack:
                    stack[-1].next_branch(False, None, True)
                elif keyword == "endif" and stack:
                    stack.pop()
                if keyword not in ("if", "ifdef", "ifndef"):
                    # `#elif`/`#else`/`#endif` belong to their chain; the line that opens a
                    # chain belongs to the code around it, so a check about the condition
                    # itself (`#if __CUDA_ARCH__ >= 800`) still sees it.
                    inside = inside or any(chain.platform or chain.dead for chain in stack)
            for j in range(start, i + 1):
                self._gated[j + 1] = inside
            i += 1

    @staticmethod
    def _include_guard(keyword: str, condition: str, code_lines: list[str], after: int) -> bool:
        """`#ifndef X` or `#if !defined(X)` whose next non-blank line is `#define X`."""
        if keyword == "ifndef":
            name = condition.strip()
        elif keyword == "if" and "!" in condition:
            guard = _GUARD_TEST.match(condition)
            name = guard.group(1) if guard else ""
        else:
            return False
        for line in code_lines[after:]:
            if line.strip():
                define = _DEFINE.match(line)
                return bool(define) and define.group(1) == name
        return False

    def is_gated(self, line: int) -> bool:
        return 0 < line < len(self._gated) and self._gated[line]
