"""`rocmlint scan --fix`: write the automatic rewrites into the files, losing nothing.

Each file is read again and checked against what was scanned (a file changed since is left
alone); only the rewritten spans change, so every other byte stays as it was, line endings
included (a replacement that adds a line uses the line ending of the line it goes into); a
Python file whose rewritten text would not parse is not written; the new text goes to a
temporary file beside the original, which is then renamed over it, so a full disk, a quota
or a crash leaves the original whole. A file that cannot be written is reported, and the
other files are still fixed.

`rewritten` and `diff_of_fixes` give the same rewrite as text, for --diff and for a fix of
standard input.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import os
import tempfile
from typing import Iterable

from rocmlint.files.discovery import ReadError, read_regular_file
from rocmlint.fixes.edits import choose_edits
from rocmlint.findings import Edit, Finding, Problem
from rocmlint.files.languages import language_of


def fix_files(findings: Iterable[Finding], unsafe: bool) -> tuple[int, list[Problem]]:
    """Apply the fixes of `findings`, file by file. Returns (fixes applied, problems)."""
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.fix is not None:
            by_path.setdefault(finding.path, []).append(finding)
    applied_total = 0
    problems: list[Problem] = []
    for path in sorted(by_path):
        applied, problem = fix_file(path, by_path[path], unsafe)
        applied_total += applied
        if problem is not None:
            problems.append(problem)
    return applied_total, problems


def fix_file(path: str, findings: list[Finding], unsafe: bool) -> tuple[int, Problem | None]:
    edits, applied = choose_edits(findings, unsafe)
    if not applied:
        return 0, None
    try:
        raw = read_regular_file(path, 0)
    except ReadError as exc:
        return 0, Problem(path, f"not fixed: {exc}")
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return 0, Problem(path, "not fixed: the file is no longer valid UTF-8")
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = normalised.split("\n")
    for finding in findings:
        for number, expected in finding.context.items():
            if not 0 < number <= len(lines) or lines[number - 1] != expected:
                return 0, Problem(path, "not fixed: the file changed after it was scanned", number)
    fixed = rewrite(text, edits)
    if language_of(path) == "python":
        try:
            ast.parse(fixed)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            line = getattr(exc, "lineno", None)
            return 0, Problem(path, f"not fixed: the rewritten file would not parse ({getattr(exc, 'msg', exc)}); left as it was", line)
    try:
        write_atomically(path, (b"\xef\xbb\xbf" if bom else b"") + fixed.encode("utf-8"))
    except OSError as exc:
        return 0, Problem(path, f"not fixed: cannot write: {exc.strerror or exc}")
    return applied, None


def rewrite(text: str, edits: list[Edit]) -> str:
    """`text` (line endings as in the file) with `edits` applied; the edits' offsets count
    every line ending as one character, as the scanned text does."""
    # Offsets in the scanned text, where "\r\n" was one character, to offsets in `text`.
    crlf_at: list[int] = []
    position = text.find("\r\n")
    removed = 0
    while position >= 0:
        crlf_at.append(position - removed)
        removed += 1
        position = text.find("\r\n", position + 2)

    def raw(offset: int) -> int:
        return offset + bisect.bisect_left(crlf_at, offset)

    pieces = []
    previous = len(text)
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        start, end = raw(edit.start), raw(edit.end)
        replacement = edit.replacement
        if "\n" in replacement:
            replacement = replacement.replace("\n", _line_ending(text, start))
        pieces.append(text[end:previous])
        pieces.append(replacement)
        previous = start
    pieces.append(text[:previous])
    return "".join(reversed(pieces))


def _line_ending(text: str, at: int) -> str:
    """The line ending of the line holding offset `at` (of the line before it, at the end of
    a file whose last line has none; "\\n" in a file of one line)."""
    for search_from in (at, None):
        if search_from is None:
            end = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at))
            if end < 0:
                return "\n"
            if text[end] == "\n" and end > 0 and text[end - 1] == "\r":
                return "\r\n"
            return text[end]
        newline, carriage = text.find("\n", at), text.find("\r", at)
        if newline < 0 and carriage < 0:
            continue
        if carriage >= 0 and (newline < 0 or carriage < newline):
            return "\r\n" if text.startswith("\r\n", carriage) else "\r"
        return "\n"
    return "\n"


def write_atomically(path: str, data: bytes) -> None:
    """Replace the file's content: write a temporary file in the same directory, then rename
    it over the file (the file a symbolic link points to, keeping the link)."""
    real = os.path.realpath(path)
    directory = os.path.dirname(real) or "."
    mode = os.stat(real).st_mode & 0o7777
    descriptor, temporary = tempfile.mkstemp(prefix="." + os.path.basename(real) + ".", suffix=".rocmlint-fix", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, real)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def rewritten(raw: bytes, findings, unsafe: bool) -> tuple[bytes, int]:
    """(the file's bytes with the fixes of `findings` applied, how many were applied), as
    --fix would write them."""
    edits, applied = choose_edits(list(findings), unsafe)
    if not applied:
        return raw, 0
    bom = raw.startswith(b"\xef\xbb\xbf")
    fixed = rewrite(raw.decode("utf-8-sig"), edits)
    return (b"\xef\xbb\xbf" if bom else b"") + fixed.encode("utf-8"), applied


def _diff_name(name: str) -> str:
    """A file name for a diff header. One with a control character in it (a line break would
    end the header and start a line of its own) is quoted as git quotes it, which `git apply`
    reads: C escapes inside double quotes, other bytes in octal. Other names are as they are."""
    if not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
        return name
    named = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"', ord("\\"): "\\\\"}
    out = []
    for byte in os.fsencode(name):
        if byte in named:
            out.append(named[byte])
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return '"' + "".join(out) + '"'


def _patch_lines(text: str) -> list[str]:
    """The lines of `text` as `patch` and `git apply` count them: ended by "\n" only. A lone
    "\r" (old Mac line ends), a form feed or U+2028 stays inside its line, where
    str.splitlines would start a new one that no tool applying the patch would find."""
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    # Decoded with any byte-order mark kept: it is part of the file's first line, and a hunk
    # whose context leaves it out does not apply.
    old = _patch_lines(before.decode("utf-8"))
    new = _patch_lines(after.decode("utf-8"))
    lines = difflib.unified_diff(old, new, fromfile=_diff_name(f"a/{path}"), tofile=_diff_name(f"b/{path}"))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def diff_of_fixes(findings, unsafe: bool, read=lambda path: read_regular_file(path, 0)) -> tuple[str, int]:
    """The unified diff --fix would make, and how many fixes it holds."""
    by_path: dict[str, list] = {}
    for finding in findings:
        if finding.fix is not None:
            by_path.setdefault(finding.path, []).append(finding)
    out, total = [], 0
    for path in sorted(by_path):
        before = read(path)
        after, applied = rewritten(before, by_path[path], unsafe)
        if applied:
            out.append(unified_diff(path, before, after))
            total += applied
    return "".join(out), total
