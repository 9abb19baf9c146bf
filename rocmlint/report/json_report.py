"""Machine-readable findings. Columns are 1-based code points; ends are exclusive."""

from __future__ import annotations

import json

from rocmlint import __version__
from rocmlint.catalog.loader import check_by_id
from rocmlint.catalog.docs import docs_url
from rocmlint.report.text import shown


def _path(path: str) -> str:
    """A file name that is not UTF-8 is shown with its bytes escaped (`\\xff`), so that the
    document stays valid UTF-8."""
    return shown(path) if any("\udc80" <= ch <= "\udcff" for ch in path) else path


def finding_dict(f) -> dict:
    fix = None
    if f.fix is not None:
        fix = {
            "title": f.fix.title,
            "safety": f.fix.safety,
            "edits": [
                {
                    "start": {"line": e.start_line, "column": e.start_col + 1},
                    "end": {"line": e.end_line, "column": e.end_col + 1},
                    "replacement": e.replacement,
                }
                for e in f.fix.edits
            ],
        }
    return {
        "path": _path(f.path),
        "line": f.line,
        "column": f.col + 1,
        "end_line": f.end_line,
        "end_column": f.end_col + 1,
        "code": f.check_id,
        "severity": f.severity,
        "message": f.message,
        "fix": fix,
        "url": _url(f.check_id),
    }


def _url(check_id: str) -> str | None:
    check = check_by_id(check_id)
    return docs_url(check) if check is not None else None


# The version of the document's shape (rocmlint/schemas/report.schema.json): raised when a
# field changes meaning or goes away, not when one is added.
FORMAT_VERSION = 1


def render_json(result, *, show_gated: bool = False, show_skipped: bool = False) -> str:
    document = {
        "tool": "rocmlint",
        "format_version": FORMAT_VERSION,
        "version": __version__,
        "files_checked": result.files_scanned,
        "findings": [finding_dict(f) for f in result.findings],
        "skipped": [{"path": _path(p.path), "reason": p.reason, "line": p.line} for p in result.problems],
        "gated_count": len(result.gated),
    }
    if show_gated:
        document["gated"] = [{**finding_dict(f), "gate": f.gate} for f in result.gated]
    if show_skipped:
        document["left_out"] = [{"path": _path(p.path), "reason": p.reason} for p in getattr(result, "left_out", [])]
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def render_json_lines(result) -> str:
    """One finding per line, each the object the json format lists (as ruff's json-lines)."""
    return "".join(json.dumps(finding_dict(f), ensure_ascii=False) + "\n" for f in result.findings)
