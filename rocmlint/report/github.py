"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

Paths are relative to the repository root (the git top level), which is where GitHub looks for
them whatever the step's working directory; outside a git work tree, as scanned.

GitHub shows at most 10 annotations of each kind (error, warning, notice) per step and drops the
rest without a word. So annotations go out most severe first, 10 of each kind; the findings
beyond that are printed as plain `path:line:col: ROCMnnn message` lines, which the step's log
keeps, and a last line says how many were not annotated.
"""

from __future__ import annotations

from rocmlint.report.text import shown

_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}
_ORDER = {"error": 0, "warning": 1, "notice": 2}
# GitHub's limit per kind of annotation and step (docs: "Workflow commands for GitHub Actions").
ANNOTATIONS_PER_KIND = 10


def _escape_data(text: str) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return shown(text)  # other control characters and bytes of names that are not UTF-8


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result, *, root=None) -> str:
    from rocmlint.report.locations import relative_to

    def shown(path: str) -> str:
        return (relative_to(path, root) if root is not None else None) or path

    from rocmlint.report.text import shown_path

    # (kind, order among its kind, annotation, the same as a plain log line)
    entries = []
    for f in result.findings:
        props = (
            f"file={_escape_property(shown(f.path))},line={f.line},col={f.col + 1},"
            f"endLine={f.end_line},endColumn={f.end_col + 1},title={_escape_property(f.check_id)}"
        )
        annotation = f"::{_LEVEL[f.severity]} {props}::{_escape_data(f.check_id + ' ' + f.message)}"
        plain = f"{shown_path(shown(f.path))}:{f.line}:{f.col + 1}: {f.check_id} {_shown_text(f.message)}"
        entries.append((_LEVEL[f.severity], annotation, plain))
    for p in result.problems:
        line = f",line={p.line}" if p.line else ""
        annotation = f"::warning file={_escape_property(shown(p.path))}{line},title=rocmlint::{_escape_data('skipped: ' + p.reason)}"
        plain = f"{shown_path(shown(p.path))}{f':{p.line}' if p.line else ''}: skipped: {_shown_text(p.reason)}"
        entries.append(("warning", annotation, plain))
    entries.sort(key=lambda entry: _ORDER[entry[0]])  # stable: file order within a kind
    out, unannotated = [], []
    per_kind: dict[str, int] = {}
    for kind, annotation, plain in entries:
        per_kind[kind] = per_kind.get(kind, 0) + 1
        if per_kind[kind] <= ANNOTATIONS_PER_KIND:
            out.append(annotation)
        else:
            unannotated.append((kind, plain))
    if unannotated:
        counts = {kind: sum(1 for k, _ in unannotated if k == kind) for kind in _ORDER}
        said = ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in counts.items() if n)
        out.extend(plain for _, plain in unannotated)
        out.append(
            f"rocmlint: {len(unannotated)} not shown as annotations ({said}): GitHub shows {ANNOTATIONS_PER_KIND} of each kind "
            "per step; they are listed above, and code scanning (--format sarif) shows every one"
        )
    return "\n".join(out) + ("\n" if out else "")


def _shown_text(text: str) -> str:
    """Text on a plain log line: one line, and no `::` that GitHub would read as a command."""
    return shown(text).replace("::", ": :")
