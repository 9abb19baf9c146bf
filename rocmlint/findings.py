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
    """Replace text[start:end] (code-point offsets into the file) with `replacement`."""

    start: int
    end: int
    replacement: str


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

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.check_id)


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
