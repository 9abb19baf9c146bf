"""`path:line:col: ROCMnnn message`, 1-based code-point columns, as compilers and flake8 print."""

from __future__ import annotations

import re

from rocmlint.catalog.loader import check_by_id

# What must not reach a terminal or a line-based parser as it is: control characters (a
# newline would start a fake `path:line:col: ROCMnnn` line), line and paragraph separators,
# and the lone surrogates that stand for the bytes of a file name that is not UTF-8.
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escape(hit: re.Match) -> str:
    ch = hit.group(0)
    if "\udc80" <= ch <= "\udcff":
        return f"\\x{ord(ch) - 0xDC00:02x}"  # the byte the file name holds
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch) or ch.encode("unicode_escape").decode("ascii")


def shown(text: str) -> str:
    """`text` on one line, printable: control characters and undecodable bytes escaped
    (`\\n`, `\\x1b`, `\\xff`)."""
    return _UNSHOWABLE.sub(_escape, text) if _UNSHOWABLE.search(text) else text


def shown_path(path: str) -> str:
    """A path as the first thing on an output line: shown(path), and never the start of a CI
    workflow command. GitHub Actions takes any line of a step's output that starts with `::`
    (after white space) for a command (`::error file=x::...`, `::add-mask::...`), so a path
    that would start one is written `./::...`, which names the same file."""
    text = shown(path)
    return "./" + text if text.lstrip().startswith("::") else text


# ANSI styles of the coloured text format (--color): the path bold, the check id by severity.
_BOLD, _RESET, _CYAN = "\033[1m", "\033[0m", "\033[36m"
_SEVERITY_COLOUR = {"error": "\033[1;31m", "warning": "\033[1;33m", "note": "\033[1;34m"}


def render_text(
    result, *, show_fix: bool = False, show_gated: bool = False, rocm_version=None, show_skipped: bool = False, color: bool = False
) -> str:
    out: list[str] = []
    for f in result.findings:
        # As in ruff, [*] marks what plain --fix repairs; unsafe fixes are counted in the summary.
        marker = " [*]" if f.fix is not None and f.fix.safety == "safe" else ""
        if color:
            code = f"{_SEVERITY_COLOUR.get(f.severity, _BOLD)}{f.check_id}{_RESET}"
            marker = f" {_CYAN}[*]{_RESET}" if marker else ""
            out.append(f"{_BOLD}{shown_path(f.path)}{_RESET}:{f.line}:{f.col + 1}: {code}{marker} {shown(f.message)}")
        else:
            out.append(f"{shown_path(f.path)}:{f.line}:{f.col + 1}: {f.check_id}{marker} {shown(f.message)}")
        if show_fix:
            check = check_by_id(f.check_id)
            if check is not None and check.fix is not None:
                title, snippet = check.fix.for_rocm(rocm_version)
                out.append(f"    fix: {title}")
                out.extend("    | " + line if line else "    |" for line in snippet.rstrip().splitlines())
            if f.fix is not None:
                flag = "--fix" if f.fix.safety == "safe" else "--fix --unsafe-fixes"
                out.append(f"    automatic ({f.fix.safety}, {flag}): {f.fix.title}")
                out.extend("    " + shown(line) for line in fix_preview(f))
    if show_gated and result.gated:
        out.append(f"Gated, not reported ({len(result.gated)}):")
        for f in result.gated:
            out.append(f"{shown_path(f.path)}:{f.line}:{f.col + 1}: {f.check_id} {shown(f.message)}")
            out.append(f"    gated: {shown(f.gate)}")
    if show_skipped and result.problems:
        out.append(f"Skipped, could not be analysed ({len(result.problems)}):")
        for p in result.problems:
            out.append(f"{problem_location(p)}: {shown(p.reason)}")
    left_out = getattr(result, "left_out", [])
    if show_skipped and left_out:
        out.append(f"Left out ({len(left_out)}):")
        out.extend(f"{shown_path(p.path)}: {shown(p.reason)}" for p in left_out)
    out.append(summary(result, show_gated=show_gated))
    return "\n".join(out) + "\n"


def problem_location(problem) -> str:
    """`path:line` (or `path`) of a file that could not be analysed, as it starts a line."""
    return f"{shown_path(problem.path)}:{problem.line}" if problem.line else shown_path(problem.path)


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
