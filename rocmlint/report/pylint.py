"""`path:line: [ROCMnnn] message`, the line format pylint's parsers read (as ruff's `pylint`)."""

from __future__ import annotations

from rocmlint.report.text import shown, shown_path


def render_pylint(result) -> str:
    return "".join(f"{shown_path(f.path)}:{f.line}: [{f.check_id}] {shown(f.message)}\n" for f in result.findings)
