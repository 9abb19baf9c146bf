"""--add-noqa: a suppression comment on every line with a finding, so that a legacy tree starts
clean and only new code is held to the checks.

Comments go at the end of the flagged line (`# noqa: ROCM001` or `// noqa: ROCM201`, rocmlint.noqa.comments);
codes already listed there are kept. A comment is only added where it cannot change what the
file means, and the file is left alone otherwise, with the reason:
- a line ending in a backslash (the comment would swallow the continuation);
- Python: the file's syntax tree must be the same after the edit (a line inside a string);
- TOML and YAML: the data must be the same after the edit (a multi-line string or block);
- Dockerfiles: only shell-form RUN lines (elsewhere `#` is not a comment);
- .env files: never (docker's --env-file keeps `# ...` as part of the value).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rocmlint.files.languages import language_of
from rocmlint.noqa.comments import HASH_NOQA, SLASH_NOQA

_DOCKER_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\b")


@dataclass
class NoqaReport:
    added: int = 0  # comments written or extended
    files: int = 0
    refused: list[tuple[str, int, str]] = field(default_factory=list)  # (path, line, why)


def _with_codes(line: str, codes: list[str], slash: bool) -> str:
    pattern = SLASH_NOQA if slash else HASH_NOQA
    existing = next((m for m in pattern.finditer(line) if m.group("codes")), None)
    if existing:
        have = [c for c in re.split(r"[,\s]+", existing.group("codes")) if c]
        merged = have + [c for c in codes if c not in have]
        return line[: existing.start("codes")] + ", ".join(merged) + line[existing.end("codes") :]
    marker = "//" if slash else "#"
    return f"{line.rstrip()}  {marker} noqa: {', '.join(codes)}"


def _dockerfile_run_line(lines: list[str], index: int) -> bool:
    """Whether line `index` belongs to a shell-form RUN instruction."""
    start = index
    while start > 0 and lines[start - 1].rstrip().endswith("\\"):
        start -= 1
    match = _DOCKER_INSTRUCTION.match(lines[start])
    if not match or match.group(1).upper() != "RUN":
        return False
    rest = lines[start][match.end() :].lstrip()
    return not rest.startswith("[")  # exec form: JSON, no comments


def same_meaning(language: str, before: str, after: str) -> bool:
    try:
        if language == "python":
            import ast

            return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))
        if language == "pyproject":
            from rocmlint.config import toml_parser

            tomllib = toml_parser()
            return tomllib.loads(before) == tomllib.loads(after)
        if language == "yaml":
            import yaml

            return list(yaml.safe_load_all(before)) == list(yaml.safe_load_all(after))
    except Exception:  # a file that no longer parses has changed meaning
        return False
    return True


def line_with_noqa(language: str | None, lines: list[str], number: int, codes: list[str]) -> tuple[str | None, str]:
    """Line `number` (1-based) of `lines` with a suppression comment for `codes` (codes already
    listed there kept), or None and why no comment may go on it. Whether the file still means
    the same is asked of the whole text (same_meaning)."""
    line = lines[number - 1]
    if language == "dotenv":
        return None, ".env files keep `# ...` in the value for docker --env-file"
    if language == "uvlock":
        return None, "uv.lock is rewritten by `uv lock`, which drops comments"
    if line.rstrip().endswith("\\"):
        return None, "the line continues on the next one (backslash)"
    if language == "dockerfile" and not _dockerfile_run_line(lines, number - 1):
        return None, "in a Dockerfile `#` is a comment only in shell-form RUN lines"
    return _with_codes(line, codes, slash=language == "cpp"), ""


def add_noqa(findings) -> NoqaReport:
    report = NoqaReport()
    by_path: dict[str, dict[int, list[str]]] = {}
    for finding in findings:
        codes = by_path.setdefault(finding.path, {}).setdefault(finding.line, [])
        if finding.check_id not in codes:
            codes.append(finding.check_id)
    for path, by_line in by_path.items():
        language = language_of(path)
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            report.refused.extend((path, number, f"cannot read the file: {exc.strerror or exc}") for number in sorted(by_line))
            continue
        bom = raw.startswith(b"\xef\xbb\xbf")
        text = raw.decode("utf-8-sig")
        newline = "\r\n" if "\r\n" in text else "\n"
        lines = text.replace("\r\n", "\n").split("\n")
        wanted: dict[int, str] = {}
        for number, codes in sorted(by_line.items()):
            new_line, why = line_with_noqa(language, lines, number, codes)
            if new_line is None:
                report.refused.append((path, number, why))
            elif new_line != lines[number - 1]:
                wanted[number] = new_line
        if not wanted:
            continue
        before = "\n".join(lines)
        for number, new_line in wanted.items():
            lines[number - 1] = new_line
        if not same_meaning(language, before, "\n".join(lines)):
            # Find the lines at fault one by one (a line that ends inside a string, say).
            lines = before.split("\n")
            for number, new_line in list(wanted.items()):
                old_line, lines[number - 1] = lines[number - 1], new_line
                if not same_meaning(language, before, "\n".join(lines)):
                    lines[number - 1] = old_line
                    del wanted[number]
                    report.refused.append((path, number, "a comment there would change the file's contents (inside a string?)"))
        if not wanted:
            continue
        after = "\n".join(lines)
        Path(path).write_bytes((b"\xef\xbb\xbf" if bom else b"") + after.replace("\n", newline).encode("utf-8"))
        report.added += len(wanted)
        report.files += 1
    return report
