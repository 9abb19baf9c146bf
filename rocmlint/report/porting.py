"""The porting report's figures: where the work of a port is, counted from one scan's result.

The HTML page (rocmlint.report.html_report) and the Markdown summary
(rocmlint.report.markdown_summary) both draw from `PortingFigures`; neither counts anything
itself, and nothing here checks code: the findings are the scan's.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rocmlint.catalog.loader import check_by_id
from rocmlint.report.json_report import _path as shown_name

# Check families by id prefix (README, "Checks": ids never change meaning).
FAMILIES = (
    ("ROCM0", "ROCM0xx", "ROCm porting guide pitfalls"),
    ("ROCM1", "ROCM1xx", "Python and framework APIs"),
    ("ROCM2", "ROCM2xx", "CUDA/HIP C++"),
    ("ROCM3", "ROCM3xx", "build, packaging, containers"),
    ("ROCM9", "ROCM9xx", "opinionated (off by default)"),
)


@dataclass(frozen=True)
class Effort:
    key: str
    label: str
    meaning: str


# What it takes to deal with a finding, most automatic first. The one place that says it:
# a finding whose fix-it carries a safe rewrite is made by --fix; an unsafe rewrite needs
# --unsafe-fixes and a review; a finding of a check that reads C/C++ (`languages: [cpp]` in
# its check file) is a change to GPU code; every other one is a rewrite by hand from the
# check's fix-it snippet.
EFFORTS = (
    Effort("fix", "--fix", "a safe automatic rewrite: rocmlint scan --fix makes it"),
    Effort("unsafe-fix", "--fix --unsafe-fixes", "an automatic rewrite to review: rocmlint scan --fix --unsafe-fixes makes it"),
    Effort("rewrite", "rewrite by hand", "apply the check's fix-it snippet by hand"),
    Effort("kernel", "kernel change", "C/C++ GPU code to change: wave size, intrinsics, architecture gates, CUDA-only APIs"),
)
KERNEL_LANGUAGES = frozenset({"cpp"})


def effort_of(finding, check) -> str:
    if finding.fix is not None:
        return "fix" if finding.fix.safety == "safe" else "unsafe-fix"
    if check is not None and KERNEL_LANGUAGES & set(check.languages):
        return "kernel"
    return "rewrite"


def family_of(check_id: str) -> str:
    for prefix, name, _ in FAMILIES:
        if check_id.startswith(prefix):
            return name
    return "other"


class PreviousReportError(ValueError):
    pass


def read_previous(path: Path) -> dict:
    """A report written by `rocmlint scan --format json` earlier: the baseline of the trend."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PreviousReportError(f"--previous {path}: cannot read it: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PreviousReportError(f"--previous {path}: not a JSON document ({exc})") from None
    findings = document.get("findings") if isinstance(document, dict) else None
    if not isinstance(document, dict) or document.get("tool") != "rocmlint" or not isinstance(findings, list):
        raise PreviousReportError(f"--previous {path}: not a rocmlint json report (write one with rocmlint scan --format json)")
    for item in findings:
        if not isinstance(item, dict) or not all(isinstance(item.get(key), str) for key in ("path", "code", "message")):
            raise PreviousReportError(f"--previous {path}: a finding without path, code and message: {str(item)[:80]}")
    return document


@dataclass
class Trend:
    before: int
    now: int
    new: int  # findings not in the previous report (by path, check and message)
    gone: int  # findings of the previous report not found now
    by_check: list[tuple[str, int, int]]  # (check id, before, now), changed ones only
    gated_before: int | None


@dataclass
class CheckRow:
    id: str
    title: str
    family: str
    severity: str
    effort: Counter
    count: int
    check: object  # rocmlint.catalog.loader.Check, or None for an id the catalog lacks


@dataclass
class PortingFigures:
    title: str
    scanned: list[str]
    files_checked: int
    findings: list  # the scan's Finding objects, in file order
    shown_paths: dict  # finding path -> the name shown (relative to the report's root)
    by_severity: Counter
    by_family: dict  # family -> Counter of severity
    by_effort: Counter
    by_directory: list[tuple[str, Counter]]  # (directory, severity counts), most findings first
    by_component: list[tuple[str, int, int]] | None  # (owners, findings, files); None: no CODEOWNERS
    codeowners: str | None  # the CODEOWNERS file read, as shown
    checks: list[CheckRow]
    gated: list[tuple[str, int, Counter]]  # (reason, hits, hits per check), most first
    gated_total: int
    skipped: int
    problems: list[tuple[str, int | None, str]]  # files not analysed: (name, line, reason)
    trend: Trend | None
    efforts: dict = field(default_factory=dict)  # finding -> effort key


def _relative(path: str, root: Path) -> str:
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:  # another drive on Windows
        return path.replace(os.sep, "/")
    return path.replace(os.sep, "/") if relative.startswith("..") else relative.replace(os.sep, "/")


def gate_kind(reason: str) -> str:
    """A gate's reason without the line it points at, so that reasons of one kind count together."""
    return _GATE_LINE.sub("", reason)


_GATE_LINE = re.compile(r" \(line \d+\)|, line \d+(?=\))")


def directory_of(relative: str, depth: int = 2) -> str:
    parts = relative.split("/")[:-1]
    return "/".join(parts[:depth]) + "/" if parts else "./"


def build_figures(result, paths: list[Path], *, previous: dict | None = None, title: str | None = None) -> PortingFigures:
    from rocmlint.report.codeowners import find_codeowners

    from rocmlint.report.locations import scan_root

    root = scan_root(paths)
    findings = sorted(result.findings, key=lambda f: f.sort_key())
    shown_paths = {f.path: shown_name(_relative(f.path, root)) for f in findings}
    checks = {code: check_by_id(code) for code in {f.check_id for f in findings}}

    by_severity = Counter(f.severity for f in findings)
    by_family: dict[str, Counter] = {}
    by_effort: Counter = Counter()
    efforts = {}
    per_check: dict[str, Counter] = {}
    directories: dict[str, Counter] = {}
    for f in findings:
        effort = effort_of(f, checks[f.check_id])
        efforts[f] = effort
        by_effort[effort] += 1
        by_family.setdefault(family_of(f.check_id), Counter())[f.severity] += 1
        per_check.setdefault(f.check_id, Counter())[effort] += 1
        directories.setdefault(directory_of(shown_paths[f.path]), Counter())[f.severity] += 1

    rows = []
    for code, counts in per_check.items():
        check = checks[code]
        rows.append(
            CheckRow(code, check.title if check else code, family_of(code), check.severity if check else "warning", counts,
                     sum(counts.values()), check)
        )
    rows.sort(key=lambda r: (-r.count, r.id))

    codeowners = find_codeowners(root)
    by_component = None
    if codeowners is not None:
        owned: dict[str, list] = {}
        for f in findings:
            owners = codeowners.owners_of(os.path.abspath(f.path))
            owned.setdefault(" ".join(owners) if owners else "(no owner)", []).append(f.path)
        by_component = sorted(((owner, len(files), len(set(files))) for owner, files in owned.items()), key=lambda r: (-r[1], r[0]))

    gate_counts = Counter(gate_kind(f.gate or "") for f in result.gated)
    gate_checks: dict[str, Counter] = {}
    for f in result.gated:
        gate_checks.setdefault(gate_kind(f.gate or ""), Counter())[f.check_id] += 1
    return PortingFigures(
        title=title or f"ROCm porting report: {root.name or root}",
        scanned=[shown_name(str(p)) for p in paths],
        files_checked=result.files_scanned,
        findings=findings,
        shown_paths=shown_paths,
        by_severity=by_severity,
        by_family={name: by_family[name] for name in [n for _, n, _ in FAMILIES] + ["other"] if name in by_family},
        by_effort=by_effort,
        by_directory=sorted(directories.items(), key=lambda item: (-sum(item[1].values()), item[0])),
        by_component=by_component,
        codeowners=shown_name(_relative(str(codeowners.path), root)) if codeowners is not None else None,
        checks=rows,
        gated=[(reason, n, gate_checks[reason]) for reason, n in sorted(gate_counts.items(), key=lambda item: (-item[1], item[0]))],
        gated_total=len(result.gated),
        skipped=len(result.problems),
        problems=[(shown_name(_relative(p.path, root)), p.line, p.reason) for p in result.problems],
        trend=_trend(previous, findings, shown_paths, len(result.gated)) if previous is not None else None,
        efforts=efforts,
    )


def _trend(previous: dict, findings, shown_paths, gated_now: int) -> Trend:
    from rocmlint.report.json_report import _path

    before = Counter((item["path"], item["code"], item["message"]) for item in previous["findings"])
    now = Counter((_path(f.path), f.check_id, f.message) for f in findings)
    checks_before = Counter(item["code"] for item in previous["findings"])
    checks_now = Counter(f.check_id for f in findings)
    changed = sorted(
        ((code, checks_before[code], checks_now[code]) for code in set(checks_before) | set(checks_now)
         if checks_before[code] != checks_now[code]),
        key=lambda row: (row[2] - row[1], row[0]),
    )
    gated_before = previous.get("gated_count")
    return Trend(
        before=sum(before.values()),
        now=sum(now.values()),
        new=sum((now - before).values()),
        gone=sum((before - now).values()),
        by_check=changed,
        gated_before=gated_before if isinstance(gated_before, int) else None,
    )
