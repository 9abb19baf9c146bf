"""The one result type every face shares.

Positions follow one convention inside rocmlint: lines are 1-based, columns are 0-based and
counted in code points. Each face converts at its edge (flake8: UTF-8 bytes; SARIF: 1-based
UTF-16 code units; text, json and github: 1-based code points).
"""

from __future__ import annotations

import bisect
import functools
import re

from rocmlint.records import field, record

SEVERITIES = ("error", "warning", "note")
# What a check's id looks like (the catalog refuses any other; a kept result holding another
# was not written by rocmlint).
CHECK_ID = re.compile(r"^ROCM\d{3}$")


@record
class Edit:
    """Replace text[start:end] (code-point offsets into the file) with `replacement`.

    The same span is also given as (line, column) positions, for reporters.
    """

    start: int
    end: int
    replacement: str
    start_line: int = 0
    start_col: int = 0
    end_line: int = 0
    end_col: int = 0


@record
class Fix:
    title: str
    safety: str  # "safe" or "unsafe"
    edits: tuple[Edit, ...]


@record
class Finding:
    path: str  # as the user gave it or as discovered, with "/" separators
    check_id: str
    message: str
    severity: str
    line: int
    col: int
    end_line: int
    end_col: int
    fix: Fix | None = None
    # Why this hit is not reported: the code is already gated for one GPU stack, or the ROCm
    # build never compiles it (None: a finding). Gated hits are listed on request only.
    gate: str | None = field(default=None, compare=False)
    # The gate does not come from the file's preprocessor structure (the configured target, a
    # file written for AMD): reading the conditions again with project macros leaves it.
    gate_fixed: bool = field(default=False, compare=False)
    # The text of every line the finding and its fix touch, for converting columns at the edges
    # (SARIF counts UTF-16 code units, flake8 UTF-8 bytes) without reading the file again.
    context: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.check_id)


def utf16_column(line_text: str, col: int) -> int:
    """Code-point column -> UTF-16 code-unit column (characters outside the BMP count twice)."""
    if line_text.isascii():  # O(1) in CPython
        return col
    return col + bisect.bisect_left(line_columns(line_text).astral, col)


def utf8_column(line_text: str, col: int) -> int:
    """Code-point column -> UTF-8 byte column, the unit of `ast` and so of flake8."""
    if line_text.isascii():
        return col
    return line_columns(line_text).to_bytes(col)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


class LineColumns:
    """Column conversions on one line: one pass over the line, then each conversion in
    O(log n), so that converting many positions of a long line stays linear."""

    def __init__(self, text: str):
        self.chars: list[int] = []  # code-point column of each non-ASCII character
        self.starts: list[int] = []  # its UTF-8 byte column
        self.ends: list[int] = []  # the byte column after it
        self.astral: list[int] = []  # code-point columns of characters outside the BMP
        extra = 0
        for hit in _NON_ASCII.finditer(text):
            column, ch = hit.start(), hit.group(0)
            width = len(ch.encode("utf-8", "surrogatepass"))
            self.chars.append(column)
            self.starts.append(column + extra)
            extra += width - 1
            self.ends.append(column + extra + 1)
            if ord(ch) > 0xFFFF:
                self.astral.append(column)

    def to_bytes(self, col: int) -> int:
        before = bisect.bisect_left(self.chars, col)
        return col if not before else self.ends[before - 1] + (col - self.chars[before - 1] - 1)

    def to_chars(self, byte_col: int) -> int:
        """The number of whole characters in the first `byte_col` bytes."""
        before = bisect.bisect_left(self.starts, byte_col)
        if not before:
            return byte_col
        last = before - 1
        if self.ends[last] > byte_col:  # byte_col falls inside a character: it does not count
            return self.chars[last]
        return self.chars[last] + 1 + (byte_col - self.ends[last])


@functools.lru_cache(maxsize=32)
def line_columns(line_text: str) -> LineColumns:
    return LineColumns(line_text)


@record
class Problem:
    """A file that could not be scanned, and why. It is reported, never fatal."""

    path: str
    reason: str
    line: int | None = None
    # A bug in rocmlint, not a property of the file: the scan exits 2 (see README, exit codes).
    internal: bool = False


@record(mutable=True)
class ScanResult:
    findings: list[Finding] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files_scanned: int = 0
    gated: list[Finding] = field(default_factory=list)  # hits not reported, each with its reason
    # Files and folders left out on purpose (ignore rules, exclude patterns, links not
    # followed), each with its reason; listed on request (--show-skipped).
    left_out: list[Problem] = field(default_factory=list)
    baselined: int = 0  # findings left out because a --baseline file records them


def excerpt(text: str, limit: int = 80) -> str:
    """`text` on one line (runs of white space made one space), cut to `limit` characters
    with "..." at the end: how code is quoted inside a message or a gate's reason."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
