"""`path:line:col: ROCMnnn message`, 1-based code-point columns, as compilers and flake8 print."""

from __future__ import annotations

from rocmlint.checks_loader import check_by_id


def render_text(result, *, show_fix: bool = False, show_gated: bool = False, rocm_version=None) -> str:
    out: list[str] = []
    for f in result.findings:
        # As in ruff, [*] marks what plain --fix repairs; unsafe fixes are counted in the summary.
        marker = " [*]" if f.fix is not None and f.fix.safety == "safe" else ""
        out.append(f"{f.path}:{f.line}:{f.col + 1}: {f.check_id}{marker} {f.message}")
        if show_fix:
            check = check_by_id(f.check_id)
            if check is not None and check.fix is not None:
                title, snippet = check.fix.for_rocm(rocm_version)
                out.append(f"    fix: {title}")
                out.extend("    | " + line if line else "    |" for line in snippet.rstrip().splitlines())
            if f.fix is not None:
                flag = "--fix" if f.fix.safety == "safe" else "--fix --unsafe-fixes"
                out.append(f"    automatic ({f.fix.safety}, {flag}): {f.fix.title}")
                out.extend("    " + line for line in fix_preview(f))
    if show_gated and result.gated:
        out.append(f"Gated, not reported ({len(result.gated)}):")
        for f in result.gated:
            out.append(f"{f.path}:{f.line}:{f.col + 1}: {f.check_id} {f.message}")
            out.append(f"    gated: {f.gate}")
    out.append(summary(result, show_gated=show_gated))
    return "\n".join(out) + "\n"


def summary(result, *, show_gated: bool = False) -> str:
    n = len(result.findings)
    files = len({f.path for f in result.findings})
    text = f"Found {n} finding{'s' if n != 1 else ''}"
    text += f" in {files} file{'s' if files != 1 else ''}" if n else ""
    text += f" ({result.files_scanned} file{'s' if result.files_scanned != 1 else ''} checked"
    if result.problems:
        text += f", {len(result.problems)} skipped"
    gated = len(getattr(result, "gated", ()))
    if gated:
        # Nothing is dropped without a word: say how many hits the gates kept back.
        text += f", {gated} gated hit{'s' if gated != 1 else ''} not reported"
        if not show_gated:
            text += ": --show-gated lists them"
    if getattr(result, "baselined", 0):
        text += f", {result.baselined} in the baseline not reported"
    text += ")."
    safe = sum(1 for f in result.findings if f.fix and f.fix.safety == "safe")
    unsafe = sum(1 for f in result.findings if f.fix and f.fix.safety == "unsafe")
    if safe:
        text += f"\n[*] {safe} fixable with --fix."
    if unsafe:
        text += f"\n[*] {unsafe} more fixable with --fix --unsafe-fixes."
    return text


def fix_preview(finding) -> list[str]:
    """The lines the automatic fix rewrites, before (`-`) and after (`+`), with line numbers."""
    groups: list[list] = []  # edits whose lines touch, in file order
    for edit in sorted(finding.fix.edits, key=lambda e: (e.start_line, e.start_col)):
        if groups and edit.start_line <= groups[-1][-1].end_line:
            groups[-1].append(edit)
        else:
            groups.append([edit])
    out: list[str] = []
    for edits in groups:
        first, last = edits[0].start_line, max(e.end_line for e in edits)
        old_lines = [finding.context.get(n) for n in range(first, last + 1)]
        if any(line is None for line in old_lines):  # a multi-line span not kept: say what is inserted
            out.extend(f"{first:>5} ~ {e.replacement}" for e in edits)
            continue
        starts = [0]
        for line in old_lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        text = "\n".join(old_lines)
        for e in reversed(edits):
            start = starts[e.start_line - first] + e.start_col
            end = starts[e.end_line - first] + e.end_col
            text = text[:start] + e.replacement + text[end:]
        width = len(str(last))
        out.extend(f"{n:>{max(width, 5)}} - {line}" for n, line in zip(range(first, last + 1), old_lines))
        out.extend(f"{first + i:>{max(width, 5)}} + {line}" for i, line in enumerate(text.split("\n")))
    return out
