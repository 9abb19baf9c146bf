"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Every selected check is listed once in `tool.driver.rules` with its docs; results point at
files by URIs relative to `%SRCROOT%`, which `originalUriBaseIds` sets to the top level of the
git work tree (else the scan root, rocmlint.report.locations); columns are 1-based UTF-16 code
units (`columnKind: utf16CodeUnits`); automatic rewrites become `fixes`; files that could not
be scanned become `toolExecutionNotifications`. With --show-gated, the hits the gates kept back
are results with a `suppressions` entry (kind `external`) whose justification is the gate's
reason.

GitHub's rules for uploaded SARIF, which the schema does not say (GitHub's "SARIF support for
code scanning" and "SARIF results exceed one or more limits" pages,
https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
and https://docs.github.com/en/code-security/code-scanning/troubleshooting-sarif-uploads/results-exceed-limit):
- a rule's `shortDescription` and `fullDescription` are at most 1,024 characters (the whole
  text stays in `help`);
- a rule keeps at most 10 tags;
- `partialFingerprints.primaryLocationLineHash` is how an alert is followed from run to run
  (rocmlint.report.fingerprints: stable when lines move);
- a run shows at most 5,000 results and is rejected above 25,000: past 5,000, results are kept
  by severity and the rest are counted in a notification;
- `automationDetails.id` carries the category (`--sarif-category`) that tells two analyses of
  one commit apart.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import quote

from rocmlint import REPOSITORY_URL, __version__
from rocmlint.catalog.docs import docs_url, prose, render_markdown, render_text
from rocmlint.findings import utf16_column
from rocmlint.report.fingerprints import fingerprints
from rocmlint.report.locations import relative_to

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = REPOSITORY_URL
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}
# GitHub reads `problem.severity` as error / warning / recommendation.
_PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}
_SEVERITY_RANK = {"error": 0, "warning": 1, "note": 2}
DESCRIPTION_LIMIT = 1024
TAGS_LIMIT = 10
RESULTS_LIMIT = 5000


def shorten(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """`text` if it fits, else its longest run of whole sentences that fits with " …"."""
    if len(text) <= limit:
        return text
    room = text[: limit - 2]
    ends = [m.end() for m in re.finditer(r"[.:;](?=\s)", room)]
    cut = ends[-1] if ends else room.rstrip().rfind(" ")
    return room[: cut if cut > 0 else len(room)].rstrip() + " …"


class _Paths:
    def __init__(self, root: Path):
        self.root = root

    def location(self, path: str, region: dict | None = None) -> dict:
        relative = relative_to(path, self.root)
        if relative is not None:
            # Percent-encode the name's bytes: a name that is not UTF-8 keeps its bytes (%FF).
            artifact = {"uri": quote(os.fsencode(relative)), "uriBaseId": "%SRCROOT%"}
        else:
            artifact = {"uri": Path(path).resolve().as_uri()}
        physical: dict = {"artifactLocation": artifact}
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
        "shortDescription": {"text": shorten(check.title)},
        "fullDescription": {"text": shorten(prose(check.description))},
        "help": {"text": render_text(check), "markdown": render_markdown(check)},
        "helpUri": docs_url(check),
        "defaultConfiguration": {"level": _LEVEL[check.severity], "enabled": check.enabled_by_default},
        "properties": {
            "tags": list(check.tags)[:TAGS_LIMIT],
            "precision": check.precision,
            "problem.severity": _PROBLEM_SEVERITY[check.severity],
        },
    }
    return rule


def _result(finding, rule_index: dict[str, int], paths: _Paths, fingerprint: str) -> dict:
    result = {
        "ruleId": finding.check_id,
        "ruleIndex": rule_index[finding.check_id],
        "level": _LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [
            paths.location(
                finding.path,
                _region(finding.context, finding.line, finding.col, finding.end_line, finding.end_col),
            )
        ],
        "partialFingerprints": {"primaryLocationLineHash": fingerprint},
    }
    if finding.fix is not None:
        uri_location = paths.location(finding.path)["physicalLocation"]["artifactLocation"]
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


def render_sarif(
    result, checks, *, show_gated: bool = False, show_skipped: bool = False, root: Path | None = None, category: str | None = None
) -> str:
    from rocmlint.report.text import shown

    paths = _Paths(root or Path.cwd())
    rules = [_rule(c) for c in checks]
    rule_index = {c.id: i for i, c in enumerate(checks)}
    notifications = []
    for problem in result.problems:
        region = {"startLine": problem.line} if problem.line else None
        notifications.append(
            {
                "level": "error" if problem.internal else "warning",
                "message": {"text": f"{shown(problem.path)}: skipped: {problem.reason}"},
                "locations": [paths.location(problem.path, region)],
                "descriptor": {"id": "file-skipped"},
            }
        )
    for left in getattr(result, "left_out", []) if show_skipped else []:
        notifications.append(
            {
                "level": "note",
                "message": {"text": f"{shown(left.path)}: left out: {left.reason}"},
                "locations": [paths.location(left.path.rstrip("/"))],
                "descriptor": {"id": "file-left-out"},
            }
        )
    gated = list(result.gated) if show_gated else []
    prints = fingerprints([*result.findings, *gated])
    # Past GitHub's display limit, keep the most severe results (GitHub would keep those too)
    # and say how many were left out, rather than upload what is silently cut or rejected.
    findings = sorted(result.findings, key=lambda f: _SEVERITY_RANK[f.severity])[:RESULTS_LIMIT]
    kept = {id(f) for f in findings}
    findings = [f for f in result.findings if id(f) in kept]
    gated_kept = gated[: RESULTS_LIMIT - len(findings)]
    left_out = len(result.findings) - len(findings) + len(gated) - len(gated_kept)
    if left_out:
        notifications.append(
            {
                "level": "warning",
                "message": {
                    "text": f"{left_out} of {len(result.findings) + len(gated)} results left out: GitHub code scanning "
                    f"shows at most {RESULTS_LIMIT} results per run, so the {RESULTS_LIMIT} most severe are kept. "
                    "`--format json` lists them all; --select, --ignore or a --baseline narrow the run."
                },
                "descriptor": {"id": "results-limit"},
            }
        )
    results = [_result(f, rule_index, paths, prints[id(f)]) for f in findings]
    for f in gated_kept:
        entry = _result(f, rule_index, paths, prints[id(f)])
        # A gated hit is a suppressed result: viewers hide it, and its justification says why.
        entry.pop("fixes", None)
        entry["suppressions"] = [{"kind": "external", "justification": f.gate}]
        results.append(entry)
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
        "originalUriBaseIds": {"%SRCROOT%": {"uri": paths.root.resolve().as_uri().rstrip("/") + "/"}},
        "columnKind": "utf16CodeUnits",
        "results": results,
    }
    if category:
        # GitHub reads the part of the id up to its last "/" as the category.
        run["automationDetails"] = {"id": category.rstrip("/") + "/"}
    document = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
