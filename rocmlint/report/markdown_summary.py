"""The porting report in short, as GitHub-flavoured Markdown: what the Action writes to
$GITHUB_STEP_SUMMARY. Names from the scanned tree are escaped so that they are shown as text,
never read as Markdown or HTML."""

from __future__ import annotations

import re

from rocmlint.catalog.docs import docs_url
from rocmlint.report.porting import EFFORTS, FAMILIES, PortingFigures

ROWS = 10  # folders and checks listed: a summary, the HTML report has the rest

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|])")


def md(text) -> str:
    text = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = " ".join(text.split())  # one table cell, one line
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def render_summary(figures: PortingFigures) -> str:
    total = len(figures.findings)
    severities = ", ".join(f"{figures.by_severity.get(s, 0)} {s}{'s' if figures.by_severity.get(s, 0) != 1 else ''}"
                           for s in ("error", "warning", "note"))
    lines = [
        f"## {md(figures.title)}",
        "",
        f"**{total} finding{'s' if total != 1 else ''}** ({severities}) in {figures.files_checked} files checked; "
        f"{figures.gated_total} gated hits not reported; {figures.skipped} files not analysed.",
        "",
    ]
    if figures.trend is not None:
        trend = figures.trend
        lines += [f"Since the previous report: {trend.before} → {trend.now} ({trend.now - trend.before:+d}), "
                  f"{trend.new} new, {trend.gone} gone.", ""]
    lines += ["| effort | findings |", "|---|---:|"]
    lines += [f"| {md(e.label)} | {figures.by_effort.get(e.key, 0)} |" for e in EFFORTS]
    meanings = {name: meaning for _, name, meaning in FAMILIES}
    lines += ["", "| family | findings | errors | warnings | notes |", "|---|---:|---:|---:|---:|"]
    for name, counts in figures.by_family.items():
        lines.append(f"| {md(name)} {md(meanings.get(name, ''))} | {sum(counts.values())} | {counts.get('error', 0)} | "
                     f"{counts.get('warning', 0)} | {counts.get('note', 0)} |")
    if figures.by_directory:
        lines += ["", "| folder | findings |", "|---|---:|"]
        lines += [f"| {md(name)} | {sum(c.values())} |" for name, c in figures.by_directory[:ROWS]]
        if len(figures.by_directory) > ROWS:
            lines.append(f"| {len(figures.by_directory) - ROWS} more folders | |")
    if figures.by_component:
        lines += ["", "| owners (CODEOWNERS) | findings |", "|---|---:|"]
        lines += [f"| {md(owner)} | {n} |" for owner, n, _ in figures.by_component[:ROWS]]
    if figures.checks:
        lines += ["", "| check | findings | fix-it |", "|---|---:|---|"]
        for row in figures.checks[:ROWS]:
            link = f"[docs]({docs_url(row.check)})" if row.check is not None else ""
            lines.append(f"| {md(row.id)} {md(row.title)} | {row.count} | {link} |")
    return "\n".join(lines) + "\n"
