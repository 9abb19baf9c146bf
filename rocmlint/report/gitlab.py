"""GitLab Code Quality: a JSON array of issues for `artifacts: reports: codequality`.

Each issue has `description`, `check_name`, `fingerprint` (unique in the report and stable
when lines move: rocmlint.report.fingerprints), `severity` (GitLab's info/minor/major/critical/blocker)
and `location.path` relative to the repository root with `location.lines.begin`/`end`
(https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format).
"""

from __future__ import annotations

import json
from pathlib import Path

from rocmlint.report.fingerprints import fingerprints, global_fingerprint
from rocmlint.report.locations import relative_to

# rocmlint's error means "breaks on ROCm", warning "slow or fragile there", note "worth a look".
_SEVERITY = {"error": "critical", "warning": "major", "note": "info"}


def render_gitlab(result, *, root: Path) -> str:
    prints = fingerprints(result.findings)
    issues = []
    for f in result.findings:
        path = relative_to(f.path, root) or f.path
        issues.append(
            {
                "description": f"{f.check_id} {f.message}",
                "check_name": f.check_id,
                "fingerprint": global_fingerprint(path, f.check_id, prints[id(f)]),
                "severity": _SEVERITY[f.severity],
                "location": {"path": path, "lines": {"begin": f.line, "end": f.end_line}},
            }
        )
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
