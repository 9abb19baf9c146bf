"""Fixes as edits: a check's rewrite template filled in for one match, and the edits of many
fixes chosen so that none overlaps another. rocmlint.fixes.files writes them into files."""

from __future__ import annotations

import ast
import re
import sys
from typing import Iterable

from rocmlint.findings import Edit, Finding, Fix

# `$NAME` is a capture of the match (or, in messages, $CODE and $TARGETS); `${import:module}`
# is a name bound to `module` in the file (rewrites only).
TEMPLATE_VAR = re.compile(r"\$\{import:([A-Za-z0-9_.]+)\}|\$([A-Z_][A-Z0-9_]*)")


def _render(template: str, match, source) -> tuple[str, list, bool] | None:
    """Fill $VAR captures and ${import:module} names. Returns (text, insertions that bind the
    modules named, whether those insertions keep behaviour identical), or None when a
    capture or a module name is not available."""
    missing = False
    insertions: list = []
    safe = True

    def substitute(hit: re.Match) -> str:
        nonlocal missing, safe
        if hit.group(1):
            reference = None
            if source.language == "python" and isinstance(match.node, ast.AST):
                reference = source.python_index.module_reference(hit.group(1), match.node)
            if reference is None:
                missing = True
                return ""
            insertions.extend(reference.insertions)
            safe = safe and reference.safe
            return reference.text
        capture = match.captures.get(hit.group(2))
        if capture is None:
            missing = True
            return ""
        return capture.text

    rendered = TEMPLATE_VAR.sub(substitute, template)
    return None if missing else (rendered, insertions, safe)


def _edit(source, start: int, end: int, replacement: str) -> Edit:
    (start_line, start_col), (end_line, end_col) = source.position(start), source.position(end)
    return Edit(start, end, replacement, start_line, start_col, end_line, end_col)


def fix_for(check, match, source) -> Fix | None:
    """The check's automatic rewrite for one match, or None when it has none, it does not
    apply here (a capture or module name is missing, the configured ROCm is too old), or the
    rewritten Python would not parse."""
    rewrite = check.fix.rewrite if check.fix else None
    if rewrite is None:
        return None
    configured = source.target.rocm_version if source.target is not None else None
    if rewrite.rocm_from is not None and configured is not None and configured < rewrite.rocm_from:
        return None  # the rewritten form does not compile on the configured ROCm
    if rewrite.capture:
        target = match.captures.get(rewrite.capture)
        if target is None:
            return None
        start, end = target.start, target.end
    else:
        start, end = match.start, match.end
    rendered = _render(rewrite.template, match, source)
    if rendered is None:
        return None
    replacement, insertions, insertions_safe = rendered
    edits = [_edit(source, start, end, replacement)]
    for insertion in dict.fromkeys(insertions):
        line_start = source.line_starts[insertion.line - 1]
        offset = line_start + len(source.lines[insertion.line - 1]) if insertion.at_line_end else line_start
        edits.append(_edit(source, offset, offset, insertion.text))
    fix = Fix(check.fix.title, rewrite.safety if insertions_safe else "unsafe", tuple(sorted(edits, key=lambda e: e.start)))
    if source.language == "python" and (_inside_f_string(source, start, end) or not _still_parses(source.text, fix)):
        return None
    return fix


def _inside_f_string(source, start: int, end: int) -> bool:
    """Before Python 3.12, the positions `ast` gives inside an f-string are not always those
    of the text, and the quotes a rewrite may use there are limited: no rewrite is offered
    inside one (a finding there keeps its snippet)."""
    if sys.version_info >= (3, 12) or "f" not in source.text.lower():
        return False
    return any(s <= start and end <= e for s, e in source.python_index.f_string_spans)


def _still_parses(text: str, fix: Fix) -> bool:
    """A Python rewrite is offered only when the rewritten file still parses."""
    for edit in sorted(fix.edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def apply_fixes(text: str, findings: Iterable[Finding], unsafe: bool) -> tuple[str, int]:
    """Apply the fixes of `findings` to `text`. A fix is applied whole or not at all: one
    whose edits overlap an edit already taken is skipped (an identical edit, such as the same
    `import torch` added by two fixes, is shared). Returns the text and the fixes applied."""
    taken, applied = choose_edits(findings, unsafe)
    for edit in sorted(taken, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text, applied


def choose_edits(findings: Iterable[Finding], unsafe: bool) -> tuple[list[Edit], int]:
    """The edits of the fixes apply_fixes applies (see there), and how many fixes."""
    taken: list[Edit] = []
    applied = 0
    for finding in findings:
        if finding.fix is None or (finding.fix.safety == "unsafe" and not unsafe):
            continue
        new = [e for e in finding.fix.edits if e not in taken]
        if any(_overlap(a, b) for a in new for b in taken):
            continue
        taken.extend(new)
        applied += 1
    return taken, applied


def _overlap(a: Edit, b: Edit) -> bool:
    if a.start < b.end and b.start < a.end:
        return True
    # An insertion where another edit starts or ends would be ordered arbitrarily.
    return (a.start == a.end and b.start <= a.start <= b.end) or (b.start == b.end and a.start <= b.start <= a.end)
