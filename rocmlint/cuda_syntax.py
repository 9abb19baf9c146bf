"""Make CUDA/HIP sources readable by the C++ grammar without moving a single character.

tree-sitter's C++ grammar does not know CUDA: it leaves ERROR nodes around `__global__`,
`__shared__` and friends, and reads a kernel launch `k<<<grid, block>>>(args)` as a chain of
shifts and comparisons without reporting an error. Checks would then match the wrong nodes or
none. Before parsing, the CUDA-only tokens are replaced by spaces of the same length (newlines
kept), so every offset, line and column in the blanked text is the offset in the original file:
  - execution-space and memory-space qualifiers (`__global__`, `__device__`, `__shared__`, ...)
  - `__launch_bounds__(...)` and `__align__(...)` with their arguments
  - the launch configuration `<<<...>>>`, which leaves an ordinary call `k          (args)`
Text inside comments and string or character literals is never touched.
"""

from __future__ import annotations

import re

_QUALIFIERS = (
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__managed__",
    "__forceinline__",
    "__noinline__",
    "__grid_constant__",
    "__restrict__",
)
_WITH_ARGS = ("__launch_bounds__", "__align__", "__cluster_dims__")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Cheap test: files with none of these need no rewriting at all.
_MARKERS = ("__", "<<<")


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def _skip_parens(text: str, open_index: int) -> int:
    """Index just past the parenthesis that closes the one at open_index (or len(text))."""
    depth = 0
    i = open_index
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def blank_cuda_syntax(text: str) -> str:
    if not any(marker in text for marker in _MARKERS):
        return text
    chars = list(text)
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch == "/" and i + 1 < n and text[i + 1] == "/":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "<" and text.startswith("<<<", i):
            end = text.find(">>>", i + 3)
            if end >= 0:
                _blank(chars, i, end + 3)
                i = end + 3
                continue
        if ch == "_" or ch.isalpha():
            word = _WORD.match(text, i)
            token = word.group(0)
            if token in _QUALIFIERS:
                _blank(chars, i, word.end())
            elif token in _WITH_ARGS:
                j = word.end()
                while j < n and text[j] in " \t":
                    j += 1
                end = _skip_parens(text, j) if j < n and text[j] == "(" else word.end()
                _blank(chars, i, end)
                i = end
                continue
            i = word.end()
            continue
        i += 1
    return "".join(chars)
