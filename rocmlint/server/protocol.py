"""rocmlint's findings in the Language Server Protocol's terms: diagnostics, edits, hovers.

Positions inside rocmlint are 1-based lines and 0-based code-point columns (rocmlint.findings);
LSP counts lines from 0 and columns in the code units the client and server agreed on at
initialisation, UTF-16 unless both said otherwise. Columns are converted here and nowhere else,
on the lines of the text that was checked (split on the line ends LSP knows: \\n, \\r\\n, \\r).
"""

from __future__ import annotations

from typing import Iterable

from lsprotocol import types

from rocmlint.findings import Edit, Finding, Problem, utf8_column, utf16_column

SOURCE = "rocmlint"
APPLY_FIXES_COMMAND = "rocmlint.applyFixes"
FIX_ALL_KIND = "source.fixAll.rocmlint"
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "note": types.DiagnosticSeverity.Information,
}


def client_column(line_text: str, col: int, encoding: str) -> int:
    """A code-point column on `line_text` in the agreed code units."""
    if encoding == types.PositionEncodingKind.Utf8:
        return utf8_column(line_text, col)
    if encoding == types.PositionEncodingKind.Utf32:
        return col
    return utf16_column(line_text, col)


def position(lines: list[str], line: int, col: int, encoding: str) -> types.Position:
    """rocmlint's (1-based line, code-point column) as an LSP position."""
    index = min(max(line - 1, 0), len(lines) - 1)
    text = lines[index]
    return types.Position(line=index, character=client_column(text, min(col, len(text)), encoding))


def finding_range(finding: Finding, lines: list[str], encoding: str) -> types.Range:
    return types.Range(
        start=position(lines, finding.line, finding.col, encoding),
        end=position(lines, finding.end_line, finding.end_col, encoding),
    )


def diagnostic(finding: Finding, lines: list[str], encoding: str, docs_url: str | None) -> types.Diagnostic:
    """The finding as the editor shows it; `data` names the check, so that a code action can
    find the finding a diagnostic came from."""
    return types.Diagnostic(
        range=finding_range(finding, lines, encoding),
        message=finding.message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.check_id,
        code_description=types.CodeDescription(href=docs_url) if docs_url else None,
        source=SOURCE,
        data={"fix": finding.fix.safety if finding.fix else None},
    )


def problem_diagnostic(problem: Problem, lines: list[str], encoding: str) -> types.Diagnostic:
    """A file rocmlint could not check (a syntax error, a configuration error, not UTF-8): said
    on its line (or the first), so that silence never looks like a clean file."""
    start = position(lines, problem.line or 1, 0, encoding)
    return types.Diagnostic(
        range=types.Range(start=start, end=start),
        message=f"rocmlint could not check this file: {problem.reason}",
        severity=types.DiagnosticSeverity.Error if problem.internal else types.DiagnosticSeverity.Warning,
        source=SOURCE,
    )


def text_edits(edits: Iterable[Edit], lines: list[str], encoding: str) -> list[types.TextEdit]:
    return [
        types.TextEdit(
            range=types.Range(
                start=position(lines, e.start_line, e.start_col, encoding), end=position(lines, e.end_line, e.end_col, encoding)
            ),
            new_text=e.replacement,
        )
        for e in edits
    ]


def line_edit(lines: list[str], number: int, new_line: str, encoding: str) -> types.TextEdit:
    """Replace line `number` (1-based) but its line end."""
    old = lines[number - 1]
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=number - 1, character=0),
            end=types.Position(line=number - 1, character=client_column(old, len(old), encoding)),
        ),
        new_text=new_line,
    )


def before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def touches(span: types.Range, asked: types.Range) -> bool:
    """Whether a finding's range and the range the client asks about share a position (an
    empty range at a finding's start or end counts)."""
    return not before(span.end, asked.start) and not before(asked.end, span.start)


def hover_markdown(finding: Finding, check, rocm_version, docs_url: str | None) -> str:
    """The finding's check, message and fix-it snippet, as `rocmlint scan --show-fix` prints them."""
    parts = [f"**{finding.check_id}** {check.title if check is not None else ''}".rstrip(), finding.message]
    if check is not None and check.fix is not None:
        from rocmlint.catalog.docs import code_fence

        title, snippet = check.fix.for_rocm(rocm_version)
        parts.append(f"Fix: {title}\n\n```{code_fence(check)}\n{snippet.rstrip()}\n```")
    if finding.fix is not None:
        how = "a quick fix" if finding.fix.safety == "safe" else "a quick fix when unsafe fixes are allowed (`unsafeFixes`)"
        parts.append(f"Automatic rewrite ({finding.fix.safety}, {how}): {finding.fix.title}")
    if docs_url:
        parts.append(f"[{finding.check_id} documentation]({docs_url})")
    return "\n\n".join(parts)
