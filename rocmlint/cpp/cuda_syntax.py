"""Make CUDA/HIP sources readable by the C++ grammar without moving a single character.

tree-sitter's C++ grammar does not know CUDA: it leaves ERROR nodes around `__global__`,
`__shared__` and friends, and reads a kernel launch `k<<<grid, block>>>(args)` as a chain of
shifts and comparisons without reporting an error. Checks would then match the wrong nodes or
none. Before parsing, the CUDA-only tokens are replaced by spaces of the same length (newlines
kept), so every offset, line and column in the blanked text is the offset in the original file:
  - execution-space and memory-space qualifiers (`__global__`, `__device__`, `__shared__`, ...)
  - `__launch_bounds__(...)`, `__align__(...)`, `__cluster_dims__(...)`, `__maxnreg__(...)`
    with their arguments
  - the launch configuration `<<<...>>>`, which leaves an ordinary call `k          (args)`
  - the template arguments of `operator<<<>(...)` (a friend specialisation of `operator<<`,
    which the grammar cannot read), which leaves `operator<<  (...)`
Comments and string or character literals (raw strings included) are never touched. The same
scanner tells other modules where comments and literals are (`literal_spans`,
`blank_comments_and_literals`), so that text in them is never read as code.

Measured with ast-grep-py 0.51 on tests/data/fused_norm.cu (221 lines: kernels, templates,
launches, an NVRTC source in a raw string, a friend `operator<<<>`): the C++ grammar alone
reports 18 ERROR nodes and reads none of the 4 launches as a call; after blanking there are
0 ERROR nodes and all 4 launches are call_expressions.
"""

from __future__ import annotations

import bisect
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
_WITH_ARGS = ("__launch_bounds__", "__align__", "__cluster_dims__", "__maxnreg__")
# Everything blank_cuda_syntax may rewrite; `\b` keeps `my__device__x` whole.
_CANDIDATE = re.compile(r"<<<|\b(?:" + "|".join(_QUALIFIERS + _WITH_ARGS) + r")\b")
# Where a comment or literal may start.
_OPENER = re.compile(r"//|/\*|\"|'")
_OPERATOR_BEFORE = re.compile(r"\boperator\s*$")
# A raw string's delimiter: at most 16 characters, none of them space, parenthesis or backslash.
_RAW_DELIMITER = re.compile(r'[^\s()\\"]{0,16}\(')
_RAW_PREFIX = re.compile(r"(?:u8|[uUL])?R")
_NUMBER_OR_WORD_TAIL = re.compile(r"[A-Za-z0-9_.]+$")
_NOT_NEWLINE = re.compile(r"[^\n]")
# Cheap test: files with none of these need no rewriting at all.
_MARKERS = ("__", "<<<")


# --- where comments and literals are ------------------------------------------------------


def _line_comment_end(text: str, start: int) -> int:
    """End of a // comment: the first newline not spliced by a backslash."""
    i = start
    while True:
        newline = text.find("\n", i)
        if newline < 0:
            return len(text)
        if text[newline - 1] != "\\":
            return newline
        i = newline + 1


def _quoted_end(text: str, start: int, quote: str) -> int:
    """End of a "..." or '...' literal opened at `start`; an unescaped newline also ends it."""
    n = len(text)
    j = start + 1
    while j < n:
        ch = text[j]
        if ch == "\\":
            j += 2
        elif ch == quote:
            return j + 1
        elif ch == "\n":
            return j
        else:
            j += 1
    return n


def _scan_literals(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_comment) of every comment and string or character literal, in order.

    Knows line splices in // comments, raw strings (R"delim(...)delim" with any encoding
    prefix), and C++14 digit separators (`1'000'000` is a number, not a character literal).
    """
    spans: list[tuple[int, int, bool]] = []
    n = len(text)
    position = 0
    while True:
        opener = _OPENER.search(text, position)
        if opener is None:
            return spans
        i = opener.start()
        kind = opener.group(0)
        if kind == "//":
            end = _line_comment_end(text, i)
            spans.append((i, end, True))
        elif kind == "/*":
            close = text.find("*/", i + 2)
            end = n if close < 0 else close + 2
            spans.append((i, end, True))
        else:
            tail = _NUMBER_OR_WORD_TAIL.search(text, max(0, i - 32), i)
            token = tail.group(0) if tail else ""
            if kind == "'" and token[:1].isdigit():
                position = i + 1  # a digit separator inside a number
                continue
            start = i
            end = None
            if kind == '"' and _RAW_PREFIX.fullmatch(token):
                delimiter = _RAW_DELIMITER.match(text, i + 1)
                if delimiter:
                    closing = ")" + delimiter.group(0)[:-1] + '"'
                    close = text.find(closing, delimiter.end())
                    start = i - len(token)
                    end = n if close < 0 else close + len(closing)
            if end is None:
                end = _quoted_end(text, i, kind)
            spans.append((start, end, False))
        position = end


def literal_spans(text: str) -> list[tuple[int, int]]:
    """Sorted, disjoint (start, end) offsets of every comment and string or character literal."""
    return [(start, end) for start, end, _ in _scan_literals(text)]


def _blanked(text: str, ranges: list[tuple[int, int]]) -> str:
    """`text` with each (start, end) range, sorted and disjoint, turned into spaces; newlines
    are kept."""
    if not ranges:
        return text
    pieces = []
    previous = 0
    for start, end in ranges:
        pieces.append(text[previous:start])
        pieces.append(_NOT_NEWLINE.sub(" ", text[start:end]))
        previous = end
    pieces.append(text[previous:])
    return "".join(pieces)


def blank_comments_and_literals(text: str, *, strings: bool = True) -> str:
    """`text` with every comment (and, with `strings`, every string/character literal) replaced
    by spaces, newlines kept: what remains is code, at the same offsets."""
    return _blanked(text, [(s, e) for s, e, is_comment in _scan_literals(text) if is_comment or strings])


def blank_both(text: str) -> tuple[str, str]:
    """(code only, code with string literals) in one scan: see blank_comments_and_literals."""
    spans = _scan_literals(text)
    return _blanked(text, [(s, e) for s, e, _ in spans]), _blanked(text, [(s, e) for s, e, c in spans if c])


# --- blanking CUDA-only syntax ------------------------------------------------------------


class _Literals:
    """Fast questions about a file's literal spans."""

    def __init__(self, text: str):
        self.spans = literal_spans(text)
        self.starts = [start for start, _ in self.spans]
        self.end_of = dict(self.spans)

    def containing(self, offset: int) -> tuple[int, int] | None:
        index = bisect.bisect_right(self.starts, offset) - 1
        if index >= 0 and self.spans[index][1] > offset:
            return self.spans[index]
        return None

    def inside(self, start: int, end: int) -> list[tuple[int, int]]:
        """The spans that begin within [start, end)."""
        first = bisect.bisect_left(self.starts, start)
        last = bisect.bisect_left(self.starts, end)
        return self.spans[first:last]


def _code_ranges(start: int, end: int, literals: _Literals) -> list[tuple[int, int]]:
    """[start, end) less the literal spans in it."""
    ranges = []
    cursor = start
    for span_start, span_end in literals.inside(start, end):
        if span_start > cursor:
            ranges.append((cursor, span_start))
        cursor = max(cursor, span_end)
    if cursor < end:
        ranges.append((cursor, end))
    return ranges


def _skip_space(text: str, i: int, literals: _Literals) -> int:
    n = len(text)
    while i < n:
        if i in literals.end_of:
            i = literals.end_of[i]
        elif text[i].isspace():
            i += 1
        else:
            break
    return i


def _closing_paren(text: str, open_index: int, literals: _Literals) -> int:
    """Index just past the parenthesis that closes the one at open_index (or len(text))."""
    depth = 0
    i = open_index
    n = len(text)
    while i < n:
        if i in literals.end_of:
            i = literals.end_of[i]
            continue
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _operator_template_args_end(text: str, start: int) -> int | None:
    """For `operator<<<>(` / `operator<<<T>(` (a friend template specialisation, which the
    grammar cannot parse), the end of the `<...>` after `operator<<`; None otherwise."""
    if not _OPERATOR_BEFORE.search(text, max(0, start - 64), start):
        return None
    depth = 0
    for i in range(start + 2, min(len(text), start + 256)):
        ch = text[i]
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0:
                return i + 1
        elif ch in ";{}()":
            return None
    return None


class _Launches:
    """Where the launch configuration opened by each `<<<` ends, each answer in O(log n)
    after one pass over the file (see `end`).

    A scan from each `<<<` to its `>>>` would cost the length of the rest of the file for
    every `<<<` that is not a launch (`a <<< b` repeated, an unclosed `k<<<a, b`): quadratic.
    Instead the brackets, `;`, `{`, `}` and `>>>` of the code (comments and literals
    blanked) are read once as events with the bracket depth before each, and a query looks
    up which of the three possible endings comes first.
    """

    _EVENT = re.compile(r">>>|[\[\](){};]")

    def __init__(self, text: str, literals: _Literals):
        self.text = text
        self.literals = literals
        code = _blanked(text, literals.spans)
        self.positions: list[int] = []
        self.depths: list[int] = []  # bracket depth before each event
        stop_kind: list[bool] = []
        closers: dict[int, list[int]] = {}  # depth -> indexes of `>>>` events at that depth
        depth = 0
        for hit in self._EVENT.finditer(code):
            token = hit.group(0)
            index = len(self.positions)
            self.positions.append(hit.start())
            self.depths.append(depth)
            stop_kind.append(token in ";{}")
            if token in "([":
                depth += 1
            elif token in ")]":
                depth -= 1
            elif token == ">>>":
                closers.setdefault(depth, []).append(index)
        count = len(self.positions)
        self.depths.append(depth)
        # The first stop (`;`, `{`, `}`) at or after each event.
        self.next_stop = [count] * (count + 1)
        for index in range(count - 1, -1, -1):
            self.next_stop[index] = index if stop_kind[index] else self.next_stop[index + 1]
        # The first event after which the depth is below the depth before event i: the
        # closing bracket that would take a scan from i below zero (next smaller element).
        self.next_drop = [count] * (count + 1)
        stack: list[int] = []
        for index in range(count, -1, -1):
            while stack and self.depths[stack[-1]] >= self.depths[index]:
                stack.pop()
            self.next_drop[index] = stack[-1] - 1 if stack else count
            stack.append(index)
        self.closers = closers
        self._followed_by_call: dict[int, bool] = {}

    def end(self, start: int) -> int | None:
        """As a scan from `start + 3` would find: the end of the first `>>>` outside
        brackets opened after `start`, unless a `;`, `{`, `}` or a bracket closing one opened
        before `start` comes first; and only when a `(` follows that `>>>`."""
        if _OPERATOR_BEFORE.search(self.text, max(0, start - 64), start):
            return None
        first = bisect.bisect_left(self.positions, start + 3)
        count = len(self.positions)
        if first >= count:
            return None
        base = self.depths[first]
        closers = self.closers.get(base, [])
        found = bisect.bisect_left(closers, first)
        closer = closers[found] if found < len(closers) else count
        if closer >= min(self.next_stop[first], self.next_drop[first], count):
            return None
        end = self.positions[closer] + 3
        if end not in self._followed_by_call:
            after = _skip_space(self.text, end, self.literals)
            self._followed_by_call[end] = after < len(self.text) and self.text[after] == "("
        return end if self._followed_by_call[end] else None


# Project macros that stand for declaration attributes (`CUTLASS_DEVICE`, `TORCH_API`,
# `C10_HOST_DEVICE`, `SLEEF_CONST`): before a declaration they read as a second type name and
# break the parse of everything after them; and those that stand for an unroll pragma before a
# loop (`CUTLASS_PRAGMA_UNROLL`, `CUTE_UNROLL`), which break the loop's parse. Recognised by
# name, when no `(` follows.
_ATTRIBUTE_MACRO = re.compile(
    r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API|EXPORT|IMPORT|HOST_DEVICE|DEVICE|HOST|GLOBAL|INLINE|FORCEINLINE|"
    r"FORCE_INLINE|ALWAYS_INLINE|NOINLINE|CONST|UNUSED|NODISCARD|UNROLL|NO_UNROLL)\b(?!\s*\()"
)
# `#define NAME` whose body is nothing but attribute keywords (`#define CK_TILE_DEVICE inline __device__`).
_ATTRIBUTE_DEFINE = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]*((?:(?:__host__|__device__|__global__|__forceinline__|inline|"
    r"static|constexpr|__inline__|__attribute__\s*\(\([^()]*(?:\([^()]*\)[^()]*)?\)\))[ \t]*)*)$",
    re.M,
)


_DIRECTIVE_LINE = re.compile(r"^(?=[^\S\n]*#)", re.M)


def _attribute_macro_ranges(text: str, literals: _Literals) -> list[tuple[int, int]]:
    names = {m.group(1) for m in _ATTRIBUTE_DEFINE.finditer(text)}
    pattern = _ATTRIBUTE_MACRO
    if names:
        pattern = re.compile(_ATTRIBUTE_MACRO.pattern + r"|\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b(?!\s*\()")
    ranges = []
    # Lines that are directives (their first character that is not a blank is `#`).
    directive_lines = [m.start() for m in _DIRECTIVE_LINE.finditer(text)]
    line_starts: list[int] | None = None
    for hit in pattern.finditer(text):
        start = hit.start()
        if literals.containing(start):
            continue
        if directive_lines:
            if line_starts is None:
                line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
            line_start = line_starts[bisect.bisect_right(line_starts, start) - 1]
            index = bisect.bisect_left(directive_lines, line_start)
            if index < len(directive_lines) and directive_lines[index] == line_start:
                continue  # the macro's own #define, or a condition that tests it
        ranges.append((start, hit.end()))
    return ranges


def blank_cuda_syntax(text: str) -> str:
    """`text` with CUDA-only syntax replaced by spaces: same length, same newlines, same
    comments and literals. Attribute-like project macros are blanked too (see
    _ATTRIBUTE_MACRO): the grammar cannot know them, and they carry nothing a check reads."""
    has_cuda = any(marker in text for marker in _MARKERS)
    if not has_cuda and not _ATTRIBUTE_MACRO.search(text):
        return text
    literals = _Literals(text)
    ranges: list[tuple[int, int]] = _attribute_macro_ranges(text, literals)
    if not has_cuda:
        return _blanked(text, _disjoint(ranges))
    resume = 0
    launches = _Launches(text, literals) if "<<<" in text else None
    for candidate in _CANDIDATE.finditer(text):
        start = candidate.start()
        if start < resume or literals.containing(start):
            continue
        token = candidate.group(0)
        if token == "<<<":
            end = launches.end(start)
            if end is not None:
                ranges.extend(_code_ranges(start, end, literals))
                resume = end
                continue
            end = _operator_template_args_end(text, start)
            if end is not None:
                ranges.append((start + 2, end))
                resume = end
        elif token in _WITH_ARGS:
            j = _skip_space(text, candidate.end(), literals)
            end = _closing_paren(text, j, literals) if j < len(text) and text[j] == "(" else candidate.end()
            ranges.extend(_code_ranges(start, end, literals))
            resume = end
        else:
            ranges.append((start, candidate.end()))
    return _blanked(text, _disjoint(ranges))


def _disjoint(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


# --- long lines ---------------------------------------------------------------------------

# ast-grep computes a node's column by counting the characters of its line before it, so
# every position on a line of n characters costs O(n): a one-line file with a finding every
# few characters is quadratic. The parser does not need the file's lines, only its offsets:
# in lines longer than this, a space that follows a `;`, `{` or `}` (in code, not in a
# comment, literal or directive) becomes a newline every so often: same length, same
# offsets, the same tree, short lines. Lines are then taken from offsets, never from the
# parser.
_LONG_LINE = 2048
_BREAK_EVERY = 256
_BREAK_AFTER = re.compile(r"[;{}] ")


def short_lines_for_parser(text: str) -> str:
    """`text` with long lines broken at statement boundaries for the C++ parser (see above)."""
    if len(text) <= _LONG_LINE or not any(len(line) > _LONG_LINE for line in text.split("\n")):
        return text
    literals = _Literals(text)
    characters = list(text)
    offset = 0
    previous = ""
    for line in text.split("\n"):
        directive = line.lstrip().startswith("#") or previous.rstrip().endswith("\\")
        if len(line) > _LONG_LINE and not directive:
            last_break = offset
            for hit in _BREAK_AFTER.finditer(line):
                space = offset + hit.start() + 1
                if space - last_break >= _BREAK_EVERY and not literals.containing(space):
                    characters[space] = "\n"
                    last_break = space
        offset += len(line) + 1
        previous = line
    return "".join(characters)
