"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

Paths are relative to the repository root (the git top level), which is where GitHub looks for
them whatever the step's working directory; outside a git work tree, as scanned.
"""

from __future__ import annotations

from rocmlint.report.text import shown

_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def _escape_data(text: str) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return shown(text)  # other control characters and bytes of names that are not UTF-8


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result, *, root=None) -> str:
    from rocmlint.report.locations import relative_to

    def shown(path: str) -> str:
        return (relative_to(path, root) if root is not None else None) or path

    out = []
    for f in result.findings:
        props = (
            f"file={_escape_property(shown(f.path))},line={f.line},col={f.col + 1},"
            f"endLine={f.end_line},endColumn={f.end_col + 1},title={_escape_property(f.check_id)}"
        )
        out.append(f"::{_LEVEL[f.severity]} {props}::{_escape_data(f.check_id + ' ' + f.message)}")
    for p in result.problems:
        line = f",line={p.line}" if p.line else ""
        out.append(f"::warning file={_escape_property(shown(p.path))}{line},title=rocmlint::{_escape_data('skipped: ' + p.reason)}")
    return "\n".join(out) + ("\n" if out else "")
