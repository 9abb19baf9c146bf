"""Suppression comments, read the same way by every face.

    # noqa                    every check on this line (Python and other #-comment files)
    # noqa: ROCM001,ROCM002   the listed checks (a code also matches by prefix, as in flake8)
    // noqa: ROCM201          C/C++
    // NOLINT(ROCM201)        C/C++, clang-tidy style; bare // NOLINT suppresses every check
    // NOLINTNEXTLINE(ROCM201) the next line

A `noqa` comment is read by flake8's grammar (flake8 7: `flake8.defaults.NOQA_INLINE_REGEXP`
and `Violation.is_inline_ignored`), because in a Python file flake8 reads the same comment and
the two must agree on what it suppresses:

- the marker is `# noqa`, one space between `#` and `noqa`, any case (`#noqa` is not one);
- the codes follow a colon directly, after at most one white-space character; a code is
  letters then digits (`E501`, `ROCM001`, `ROCM0`); codes are separated by commas and white
  space; the list ends at the first word that is not a code, so the text after it is free
  (`# noqa: E501 see the ROCm docs` lists E501 only);
- a colon followed by no code (`# noqa: see docs`, `# noqa:  E501` with two spaces) leaves a
  bare `# noqa`, which suppresses every check, as it does in flake8;
- a code suppresses the checks whose id starts with it, case-sensitively (`rocm001` does not
  suppress ROCM001 in flake8, so it does not here);
- the first `# noqa` of the line counts; in Python, the lines that a multi-line string or a
  backslash joins are read as one line (brackets do not join lines here, as in flake8).

C/C++ comments are not flake8's: their marker may be written `//noqa` too, and the codes after
it follow the same grammar.
"""

from __future__ import annotations

import io
import re
import tokenize

# A code is letters then digits; the list is codes with separators (or none) between them, and
# it is split at separators only, so `E501W291` is one code that matches nothing, as in flake8.
# IGNORECASE applies to the codes as well, as it does in flake8 (`e501` is read as a code).
_CODE_LIST = r"(?::\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]*[A-Z]+[0-9]+)*))?"
HASH_NOQA = re.compile(r"# noqa" + _CODE_LIST, re.IGNORECASE)
SLASH_NOQA = re.compile(r"//\s*noqa" + _CODE_LIST, re.IGNORECASE)
_CODE_SEPARATOR = re.compile(r"[,\s]")
_NOLINT = re.compile(r"\bNOLINT(?P<next>NEXTLINE)?\b(?:\((?P<codes>[^)]*)\))?")

ALL = frozenset({"*"})


def noqa_codes(match: re.Match) -> frozenset[str]:
    """The codes a `noqa` match lists, as written; ALL for a bare one."""
    raw = match.group("codes")
    if raw is None:
        return ALL
    return frozenset(code for code in _CODE_SEPARATOR.split(raw) if code)


def _nolint_codes(raw: str | None) -> frozenset[str]:
    # clang-tidy's list: comma-separated check names; `*` or nothing means every check.
    codes = [c.strip() for c in re.split(r"[,\s]+", raw or "") if c.strip()]
    if not codes or "*" in codes:
        return ALL
    return frozenset(c.upper().rstrip("*") for c in codes)


def _python_statements(text: str, lines: list[str]) -> dict[int, str] | None:
    """For each line of a Python file, the text flake8 searches for `noqa` on that line: the
    line itself, or, where a token (a multi-line string) or a backslash spans several lines,
    all of them joined, each with its newline. Ranges end at each newline token, so lines in
    brackets stay apart. None when the file does not tokenize (flake8 then reads each line
    alone)."""
    joined: dict[int, str] = {}
    first, last = len(lines) + 2, -1
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            first, last = min(first, token.start[0]), max(last, token.end[0])
            if token.type in (tokenize.NL, tokenize.NEWLINE):
                statement = "".join(line + "\n" for line in lines[first - 1:last])
                for number in range(first, last + 1):
                    joined[number] = statement
                first, last = len(lines) + 2, -1
    except (tokenize.TokenError, SyntaxError):
        return None
    return joined


class Suppressions:
    def __init__(self, text: str, language: str):
        self._by_line: dict[int, set[str]] = {}
        lines = text.split("\n")
        slash = language == "cpp"
        statements: dict[int, str] | None = None
        if language == "python" and "noqa" in text.lower():
            statements = _python_statements(text, lines)
        for number, line in enumerate(lines, start=1):
            where = statements.get(number, line) if statements is not None else line
            if "noqa" in where.lower():
                noqa = (SLASH_NOQA if slash else HASH_NOQA).search(where)
                if noqa:
                    self._add(number, noqa_codes(noqa))
            if slash and "NOLINT" in line:
                for nolint in _NOLINT.finditer(line):
                    target = number + 1 if nolint.group("next") else number
                    self._add(target, _nolint_codes(nolint.group("codes")))

    def _add(self, line: int, codes: frozenset[str]) -> None:
        self._by_line.setdefault(line, set()).update(codes)

    def suppressed(self, line: int, check_id: str) -> bool:
        codes = self._by_line.get(line)
        if not codes:
            return False
        return "*" in codes or check_id.startswith(tuple(codes))


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
            exempted |= _listed_codes(comment.group("codes"))
    return frozenset(exempted) if exempted else None


def _listed_codes(raw: str | None) -> frozenset[str]:
    """The codes of a file-level comment's list, or ALL when it names none."""
    codes = frozenset(code.upper() for code in _CODE_SEPARATOR.split(raw or "") if code)
    return codes or ALL
