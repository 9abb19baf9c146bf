"""Reporters: one ScanResult in, one document out. They only convert, never decide."""

from __future__ import annotations

from pathlib import Path

FORMATS = ("text", "json", "sarif", "github", "gitlab", "junit", "json-lines", "rdjson", "pylint", "azure")


def render(
    fmt: str,
    result,
    checks,
    *,
    show_fix: bool = False,
    show_gated: bool = False,
    rocm_version=None,
    paths=(),
    sarif_category: str | None = None,
    statistics: bool = False,
    show_skipped: bool = False,
    color: bool = False,
    elapsed: float = 0.0,
) -> str:
    """`paths` are the scanned paths: SARIF and GitLab name files relative to the repository
    root they are in (rocmlint.report.locations)."""
    from rocmlint.report.locations import git_top_level, source_root

    if statistics:
        from rocmlint.report.statistics import render_statistics_json, render_statistics_text

        return render_statistics_json(result) if fmt == "json" else render_statistics_text(result)
    if fmt == "text":
        from rocmlint.report.text import render_text

        return render_text(
            result, show_fix=show_fix, show_gated=show_gated, rocm_version=rocm_version, show_skipped=show_skipped, color=color
        )
    if fmt == "json":
        from rocmlint.report.json_report import render_json

        return render_json(result, show_gated=show_gated, show_skipped=show_skipped)
    if fmt == "sarif":
        from rocmlint.report.sarif import render_sarif

        return render_sarif(result, checks, show_gated=show_gated, show_skipped=show_skipped, root=source_root(paths), category=sarif_category)
    if fmt == "github":
        from rocmlint.report.github import render_github

        return render_github(result, root=git_top_level(paths[0] if paths else Path(".")))
    if fmt == "gitlab":
        from rocmlint.report.gitlab import render_gitlab

        return render_gitlab(result, root=source_root(paths))
    if fmt == "junit":
        from rocmlint.report.junit import render_junit

        return render_junit(result, elapsed=elapsed)
    if fmt == "json-lines":
        from rocmlint.report.json_report import render_json_lines

        return render_json_lines(result)
    if fmt == "rdjson":
        from rocmlint.report.rdjson import render_rdjson

        return render_rdjson(result)
    if fmt == "pylint":
        from rocmlint.report.pylint import render_pylint

        return render_pylint(result)
    if fmt == "azure":
        from rocmlint.report.azure import render_azure

        return render_azure(result)
    raise ValueError(f"unknown format {fmt!r}")
