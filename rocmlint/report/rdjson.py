"""reviewdog's Diagnostic Format (rdjson), for `reviewdog -f=rdjson`: one document with every
finding, its rule and docs link, and each automatic fix as a suggestion."""

from __future__ import annotations

import json

from rocmlint import REPOSITORY_URL
from rocmlint.report.json_report import _path, _url

_SEVERITY = {"error": "ERROR", "warning": "WARNING", "note": "INFO"}


def _column(finding, line: int, col: int) -> int:
    """rdjson columns are 1-based counts of UTF-8 bytes; rocmlint's are code points."""
    text = finding.context.get(line)
    return len(text[:col].encode("utf-8", errors="surrogateescape")) + 1 if text is not None else col + 1


def _range(finding, start_line: int, start_col: int, end_line: int, end_col: int) -> dict:
    return {
        "start": {"line": start_line, "column": _column(finding, start_line, start_col)},
        "end": {"line": end_line, "column": _column(finding, end_line, end_col)},
    }


def render_rdjson(result) -> str:
    diagnostics = []
    for f in result.findings:
        diagnostic = {
            "message": f.message,
            "location": {"path": _path(f.path), "range": _range(f, f.line, f.col, f.end_line, f.end_col)},
            "severity": _SEVERITY.get(f.severity, "WARNING"),
            "code": {"value": f.check_id, **({"url": url} if (url := _url(f.check_id)) else {})},
        }
        if f.fix is not None and f.fix.safety == "safe":
            diagnostic["suggestions"] = [
                {"range": _range(f, e.start_line, e.start_col, e.end_line, e.end_col), "text": e.replacement} for e in f.fix.edits
            ]
        diagnostics.append(diagnostic)
    document = {"source": {"name": "rocmlint", "url": REPOSITORY_URL}, "severity": "WARNING", "diagnostics": diagnostics}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
