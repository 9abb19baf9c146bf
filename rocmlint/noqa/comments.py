"""Suppression comments, read the same way by every face.

    # noqa                    every check on this line (Python and other #-comment files)
    # noqa: ROCM001,ROCM002   the listed checks (a code also matches by prefix, as in flake8)
    // noqa: ROCM201          C/C++
    // NOLINT(ROCM201)        C/C++, clang-tidy style; bare // NOLINT suppresses every check
    // NOLINTNEXTLINE(ROCM201) the next line
"""

from __future__ import annotations

import re

# `# noqa` / `// noqa`, with the codes it lists (`codes` is None for a bare one).
HASH_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z][A-Z0-9]*(?:[,\s]+[A-Z][A-Z0-9]*)*))?", re.IGNORECASE)
SLASH_NOQA = re.compile(r"//\s*noqa(?::\s*(?P<codes>[A-Z][A-Z0-9]*(?:[,\s]+[A-Z][A-Z0-9]*)*))?", re.IGNORECASE)
_NOLINT = re.compile(r"\bNOLINT(?P<next>NEXTLINE)?\b(?:\((?P<codes>[^)]*)\))?")

ALL = frozenset({"*"})


def _codes(raw: str | None) -> frozenset[str]:
    if not raw:
        return ALL
    raw_codes = [c.strip() for c in re.split(r"[,\s]+", raw) if c.strip()]
    if not raw_codes or "*" in raw_codes:
        return ALL
    return frozenset(c.upper().rstrip("*") for c in raw_codes)


class Suppressions:
    def __init__(self, text: str, language: str):
        self._by_line: dict[int, set[str]] = {}
        slash = language == "cpp"
        for number, line in enumerate(text.split("\n"), start=1):
            if "noqa" not in line.lower() and "NOLINT" not in line:
                continue
            noqa = (SLASH_NOQA if slash else HASH_NOQA).search(line)
            if noqa:
                self._add(number, _codes(noqa.group("codes")))
            if slash:
                for nolint in _NOLINT.finditer(line):
                    target = number + 1 if nolint.group("next") else number
                    self._add(target, _codes(nolint.group("codes")))

    def _add(self, line: int, codes: frozenset[str]) -> None:
        self._by_line.setdefault(line, set()).update(codes)

    def suppressed(self, line: int, check_id: str) -> bool:
        codes = self._by_line.get(line)
        if not codes:
            return False
        return "*" in codes or any(check_id.startswith(code) for code in codes if code)


# A whole file exempted, by a comment at the start of a line. `# flake8: noqa` as flake8 (7.x)
# reads it: `# flake8:` (or `=`), then `noqa`, whatever follows (codes after it do not narrow
# it: flake8 skips the file). And `# rocmlint: noqa` / `// rocmlint: noqa` (C/C++), alone on
# its line, optionally with the checks it exempts the file from.
_FLAKE8_FILE_NOQA = re.compile(r"^[^\S\n]*# flake8[:=][^\S\n]*noqa", re.IGNORECASE | re.MULTILINE)
_OWN_FILE_NOQA = re.compile(
    r"^[ \t]*(?P<lead>#|//)[ \t]*rocmlint[:=][ \t]*noqa"
    r"(?::[ \t]*(?P<codes>[A-Z][A-Z0-9]*(?:[ \t,]+[A-Z][A-Z0-9]*)*))?[ \t]*\r?$",
    re.IGNORECASE | re.MULTILINE,
)


def file_level_noqa(text: str, language: str) -> frozenset[str] | None:
    """The checks a file-level suppression comment exempts the whole file from (ALL for every
    check), or None when the file has none."""
    if "noqa" not in text.lower():
        return None
    lead = "//" if language == "cpp" else "#"
    if lead == "#" and _FLAKE8_FILE_NOQA.search(text):
        return ALL
    exempted: set[str] = set()
    for comment in _OWN_FILE_NOQA.finditer(text):
        if comment.group("lead") == lead:
            exempted |= _codes(comment.group("codes"))
    return frozenset(exempted) if exempted else None
