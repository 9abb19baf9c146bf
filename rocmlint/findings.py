"""The one result type every face shares.

Positions follow one convention inside rocmlint: lines are 1-based, columns are 0-based and
counted in code points. Each face converts at its edge (flake8: UTF-8 bytes; SARIF: 1-based
UTF-16 code units; text, json and github: 1-based code points).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEVERITIES = ("error", "warning", "note")


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Fix:
    title: str
    safety: str  # "safe" or "unsafe"
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
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
    # The text of every line the finding and its fix touch, for converting columns at the edges
    # (SARIF counts UTF-16 code units, flake8 UTF-8 bytes) without reading the file again.
    context: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.check_id)


def utf16_column(line_text: str, col: int) -> int:
    """Code-point column -> UTF-16 code-unit column (characters outside the BMP count twice)."""
    prefix = line_text[:col]
    return col + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def utf8_column(line_text: str, col: int) -> int:
    """Code-point column -> UTF-8 byte column, the unit of `ast` and so of flake8."""
    return len(line_text[:col].encode("utf-8"))


@dataclass(frozen=True)
class Problem:
    """A file that could not be scanned, and why. It is reported, never fatal."""

    path: str
    reason: str
    line: int | None = None


@dataclass
class ScanResult:
    findings: list[Finding] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files_scanned: int = 0
    gated: list[Finding] = field(default_factory=list)  # hits not reported, each with its reason
    baselined: int = 0  # findings left out because a --baseline file records them
