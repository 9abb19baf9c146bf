"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Every selected check is listed once in `tool.driver.rules` with its docs; results point at
files by URIs relative to `%SRCROOT%` (the current directory); columns are 1-based UTF-16 code
units (`columnKind: utf16CodeUnits`); automatic rewrites become `fixes`; files that could not be
scanned become `toolExecutionNotifications`. With --show-gated, the hits the gates kept back are
results with a `suppressions` entry (kind `external`) whose justification is the gate's reason.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from rocmlint import __version__
from rocmlint.discovery import relative_to_cwd
from rocmlint.docs import prose, render_markdown, render_text
from rocmlint.findings import utf16_column

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/rocmlint/"
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}
# GitHub reads `problem.severity` as error / warning / recommendation.
_PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}


def _uri(path: str) -> tuple[str, str | None]:
    """(uri, uriBaseId): relative to %SRCROOT% when the file is under it, else an absolute file URI."""
    relative = relative_to_cwd(path)
    if relative is not None:
        # Percent-encode the name's bytes: a name that is not UTF-8 keeps its bytes (%FF).
        return quote(os.fsencode(relative)), "%SRCROOT%"
    return Path(os.path.abspath(path)).as_uri(), None


def _location(path: str, region: dict | None = None) -> dict:
    uri, base = _uri(path)
    artifact = {"uri": uri}
    if base:
        artifact["uriBaseId"] = base
    physical = {"artifactLocation": artifact}
    if region:
        physical["region"] = region
    return {"physicalLocation": physical}


def _region(context: dict, line: int, col: int, end_line: int, end_col: int) -> dict:
    return {
        "startLine": line,
        "startColumn": utf16_column(context.get(line, ""), col) + 1,
        "endLine": end_line,
        "endColumn": utf16_column(context.get(end_line, ""), end_col) + 1,
    }


def _rule(check) -> dict:
    rule = {
        "id": check.id,
        "name": "".join(part.capitalize() for part in check.name.split("-")),
        "shortDescription": {"text": check.title},
        "fullDescription": {"text": prose(check.description)},
        "help": {"text": render_text(check), "markdown": render_markdown(check)},
        "defaultConfiguration": {"level": _LEVEL[check.severity], "enabled": check.enabled_by_default},
        "properties": {
            "tags": list(check.tags),
            "precision": check.precision,
            "problem.severity": _PROBLEM_SEVERITY[check.severity],
        },
    }
    if check.references:
        rule["helpUri"] = check.references[0]
    return rule


def _result(finding, rule_index: dict[str, int]) -> dict:
    result = {
        "ruleId": finding.check_id,
        "ruleIndex": rule_index[finding.check_id],
        "level": _LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [
            _location(
                finding.path,
                _region(finding.context, finding.line, finding.col, finding.end_line, finding.end_col),
            )
        ],
    }
    if finding.fix is not None:
        uri_location = _location(finding.path)["physicalLocation"]["artifactLocation"]
        result["fixes"] = [
            {
                "description": {"text": f"{finding.fix.title} ({finding.fix.safety} fix)"},
                "artifactChanges": [
                    {
                        "artifactLocation": uri_location,
                        "replacements": [
                            {
                                "deletedRegion": _region(
                                    finding.context, e.start_line, e.start_col, e.end_line, e.end_col
                                ),
                                "insertedContent": {"text": e.replacement},
                            }
                            for e in finding.fix.edits
                        ],
                    }
                ],
            }
        ]
    return result


def _gated_result(finding, rule_index: dict[str, int]) -> dict:
    """A gated hit as a suppressed result: viewers hide it, and its justification says why."""
    entry = _result(finding, rule_index)
    entry.pop("fixes", None)
    entry["suppressions"] = [{"kind": "external", "justification": finding.gate}]
    return entry


def render_sarif(result, checks, *, show_gated: bool = False, show_skipped: bool = False) -> str:
    from rocmlint.report.text import shown

    rules = [_rule(c) for c in checks]
    rule_index = {c.id: i for i, c in enumerate(checks)}
    notifications = []
    for problem in result.problems:
        region = {"startLine": problem.line} if problem.line else None
        notifications.append(
            {
                "level": "error" if problem.internal else "warning",
                "message": {"text": f"{shown(problem.path)}: skipped: {problem.reason}"},
                "locations": [_location(problem.path, region)],
                "descriptor": {"id": "file-skipped"},
            }
        )
    for left in getattr(result, "left_out", []) if show_skipped else []:
        notifications.append(
            {
                "level": "note",
                "message": {"text": f"{shown(left.path)}: left out: {left.reason}"},
                "locations": [_location(left.path.rstrip("/"))],
                "descriptor": {"id": "file-left-out"},
            }
        )
    run = {
        "tool": {
            "driver": {
                "name": "rocmlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }
        },
        "invocations": [
            {
                "executionSuccessful": not any(p.internal for p in result.problems),
                "toolExecutionNotifications": notifications,
            }
        ],
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(os.getcwd()).as_uri() + "/"}},
        "columnKind": "utf16CodeUnits",
        "results": [_result(f, rule_index) for f in result.findings]
        + ([_gated_result(f, rule_index) for f in result.gated] if show_gated else []),
    }
    document = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
