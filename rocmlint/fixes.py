"""Fixes as text: what --diff shows and what a fix of standard input prints.

`rewritten` applies the fixes of one file's findings to its bytes, keeping a UTF-8 BOM and
CRLF line ends as they were (positions inside rocmlint count "\n" line ends only).
"""

from __future__ import annotations

import difflib


def rewritten(raw: bytes, findings, unsafe: bool) -> tuple[bytes, int]:
    """(the fixed bytes, how many fixes were applied)."""
    from rocmlint.engine import apply_fixes

    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8-sig")
    crlf = "\r\n" in text
    fixed, applied = apply_fixes(text.replace("\r\n", "\n"), findings, unsafe)
    if not applied:
        return raw, 0
    if crlf:
        fixed = fixed.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if bom else b"") + fixed.encode("utf-8"), applied


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    old = before.decode("utf-8-sig").splitlines(keepends=True)
    new = after.decode("utf-8-sig").splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def diff_of_fixes(findings, unsafe: bool, read=lambda path: open(path, "rb").read()) -> tuple[str, int]:
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
