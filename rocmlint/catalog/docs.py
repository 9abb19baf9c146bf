"""Rule documentation, rendered from the check file and nothing else.

`rocmlint explain`, SARIF `help.markdown` and the README's check table all come from here, so
a check's docs cannot drift from the check. Every page has the same headings.
"""

from __future__ import annotations

from rocmlint import REPOSITORY_URL
from rocmlint.catalog.loader import PROJECT_KIND_NAMES, Check

_GATED_NOTE = (
    "\n\nCode already gated for one GPU stack, and files the project's ROCm build never compiles,\n"
    "are not reported: `rocmlint explain gates` says how that is decided and how to correct it."
)
HEADINGS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References")
_FENCE = {"python": "python", "cpp": "cpp", "cmake": "cmake", "dockerfile": "dockerfile", "shell": "bash"}


def prose(text: str) -> str:
    """Join the hard-wrapped lines of each paragraph, for viewers that keep line breaks."""
    return "\n\n".join(" ".join(p.split()) for p in text.split("\n\n"))


def docs_url(check: Check) -> str:
    """Where a check's documentation is read on the web: its check file in the repository."""
    return f"{REPOSITORY_URL}/blob/main/checks/{check.source}"


def code_fence(check: Check) -> str:
    return _FENCE.get(check.languages[0], "text")


def fix_safety(check: Check) -> str:
    rewrite = check.fix.rewrite if check.fix else None
    if rewrite is None:
        return "No automatic fix: the change needs a decision only the author can make. Apply the snippet above by hand."
    how = "`rocmlint scan --fix`" if rewrite.safety == "safe" else "`rocmlint scan --fix --unsafe-fixes`"
    return f"This fix is **{rewrite.safety}** and is applied by {how}. {rewrite.note}"


def _older_rocm(check: Check, fence: str) -> str:
    older = check.fix.older_rocm if check.fix else None
    if older is None:
        return ""
    release = ".".join(map(str, older.before))
    return f"\n\nBefore ROCm {release}, {older.title[0].lower()}{older.title[1:]}:\n\n```{fence}\n{older.snippet.rstrip()}\n```"


def _measured(check: Check) -> str:
    said = check.measured_text()
    if said is None:
        return ""
    if check.preview_kinds:
        where = " and on ".join(PROJECT_KIND_NAMES[k] for k in sorted(check.preview_kinds))
        return (
            f"\n\n**Preview on {where}**: measured right on {said} (docs/precision.md), less than 9 times in 10 "
            "there; there it runs only with `--preview` (or `preview = true` in the configuration)."
        )
    return f"\n\nMeasured right on {said} (docs/precision.md)."


def render_markdown(check: Check) -> str:
    example = check.invalid_examples[0]
    fence = code_fence(check)
    runtime = f"\n\nThe runtime helper: `{check.fix.runtime}`." if check.fix and check.fix.runtime else ""
    references = "\n".join(f"- <{ref}>" for ref in check.references)
    return (
        f"# {check.id}: {check.title}\n\n"
        f"Severity: {check.severity} · precision: {check.precision} · languages: {', '.join(check.languages)}"
        f"{'' if check.enabled_by_default else ' · off by default (select it to run it)'}{_measured(check)}\n\n"
        f"## What it does\n\n{check.description}{_GATED_NOTE if check.gated else ''}\n\n"
        f"## Why is this bad?\n\n{check.rationale}\n\n"
        f"## Example\n\n```{fence}\n{example.code.rstrip()}\n```\n\n"
        f"## Use instead\n\n{check.fix.title}:\n\n```{fence}\n{check.fix.snippet.rstrip()}\n```{runtime}{_older_rocm(check, fence)}\n\n"
        f"## Fix safety\n\n{fix_safety(check)}\n\n"
        f"## References\n\n{references}\n"
    )


def render_text(check: Check) -> str:
    """The terminal form of the same page: headings underlined, code indented."""
    return render_topic_text(render_markdown(check))


def render_topic_text(markdown: str) -> str:
    """A markdown page for the terminal: headings underlined, code indented."""
    lines: list[str] = []
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            lines.append("    " + line)
        elif line.startswith("# "):
            lines.append(line[2:])
            lines.append("=" * len(line[2:]))
        elif line.startswith("## "):
            lines.append(line[3:])
            lines.append("-" * len(line[3:]))
        else:
            lines.append(line.replace("**", "").replace("- <", "- ").rstrip(">"))
    return "\n".join(lines) + "\n"


def render_check_table(checks: list[Check]) -> str:
    """The README's table of checks (regenerate with `rocmlint rules --format markdown`)."""
    rows = ["| ID | Title | Languages | Severity | Fix |", "| --- | --- | --- | --- | --- |"]
    for check in checks:
        fix = check.fix.rewrite.safety if check.fix and check.fix.rewrite else "snippet"
        default = " (off by default)" if not check.enabled_by_default else preview_note(check)
        rows.append(f"| {check.id} | {check.title}{default} | {', '.join(check.languages)} | {check.severity} | {fix} |")
    return "\n".join(rows) + "\n"


def preview_note(check: Check) -> str:
    if check.preview:
        return " (preview)"
    if check.preview_kinds:
        return " (preview on " + " and ".join(PROJECT_KIND_NAMES[k] for k in sorted(check.preview_kinds)) + ")"
    return ""
