"""Reporters: one ScanResult in, one document out. They only convert, never decide."""

from __future__ import annotations

FORMATS = ("text", "json", "sarif", "github")


def render(
    fmt: str, result, checks, *, show_fix: bool = False, show_gated: bool = False, rocm_version=None, show_skipped: bool = False
) -> str:
    if fmt == "text":
        from rocmlint.report.text import render_text

        return render_text(result, show_fix=show_fix, show_gated=show_gated, rocm_version=rocm_version, show_skipped=show_skipped)
    if fmt == "json":
        from rocmlint.report.json_report import render_json

        return render_json(result, show_gated=show_gated, show_skipped=show_skipped)
    if fmt == "sarif":
        from rocmlint.report.sarif import render_sarif

        return render_sarif(result, checks, show_gated=show_gated, show_skipped=show_skipped)
    if fmt == "github":
        from rocmlint.report.github import render_github

        return render_github(result)
    raise ValueError(f"unknown format {fmt!r}")
