"""The one engine behind every face: select checks, read files, run matchers, build Findings.

Per file: read once (bad input becomes a Problem, never an exception), skip the file unless
it contains a marker string of a check for its language (most files of a real repo contain
none and are never parsed), then run each check's matcher on the shared SourceFile, drop
gated and suppressed hits, and turn the rest into Findings with their fix.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from rocmlint.checks_loader import Check, load_catalog
from rocmlint.config import Config
from rocmlint.findings import Edit, Finding, Fix, Problem, ScanResult
from rocmlint.languages import language_of
from rocmlint.matchers import Match, compile_matcher
from rocmlint.source import SourceFile

if TYPE_CHECKING:
    from rocmlint.discovery import Target

# A file is binary when its first block holds a NUL byte (what git and grep assume too).
_BINARY_PROBE = 8192
_TEMPLATE_VAR = re.compile(r"\$\{import:([A-Za-z0-9_.]+)\}|\$([A-Z_][A-Z0-9_]*)")
# Below this many files a process pool costs more than it saves.
_PARALLEL_THRESHOLD = 200


class SelectionError(ValueError):
    """A --select/--ignore value that names no check."""


# --- which checks run ------------------------------------------------------------------------


def select_checks(
    select: Sequence[str] | None = None, ignore: Sequence[str] = (), catalog: Sequence[Check] | None = None
) -> list[Check]:
    """Checks chosen by id prefixes. No `select`: every check enabled by default.

    A selector matches an id or an id prefix ("ROCM0" picks ROCM001-ROCM099); "ALL" picks all.
    Explicitly selected checks run even when off by default. Unknown selectors are errors.
    """
    catalog = list(catalog if catalog is not None else load_catalog())

    def matches(selector: str, check: Check) -> bool:
        selector = selector.strip().upper()
        return selector == "ALL" or check.id.startswith(selector)

    for selector in [*(select or ()), *ignore]:
        if not selector.strip() or not any(matches(selector, c) for c in catalog):
            raise SelectionError(f"unknown check or prefix: {selector!r} (see `rocmlint rules`)")
    if select is None:
        chosen = [c for c in catalog if c.enabled_by_default]
    else:
        chosen = [c for c in catalog if any(matches(s, c) for s in select)]
    return [c for c in chosen if not any(matches(s, c) for s in ignore)]


@lru_cache(maxsize=None)
def _matcher_for(check: Check):
    return compile_matcher(check)


# --- one file --------------------------------------------------------------------------------


def source_of(path: str, data: bytes, language: str, target=None) -> tuple[SourceFile | None, Problem | None]:
    """The file's bytes as text for scanning, or why they cannot be scanned."""
    if b"\0" in data[:_BINARY_PROBE]:
        return None, Problem(path, "binary file (NUL byte)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, Problem(path, f"not valid UTF-8 (byte {exc.start}, line {line})", line)
    # Line ends are normalised so that positions are the same on every platform.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return SourceFile(path, text, language, target=target), None


def _render(template: str, match: Match, source: SourceFile) -> tuple[str, list, bool] | None:
    """Fill $VAR captures and ${import:module} names. Returns (text, insertions that bind the
    modules named, whether those insertions keep behaviour identical), or None when a
    capture or a module name is not available."""
    missing = False
    insertions: list = []
    safe = True

    def substitute(hit: re.Match) -> str:
        nonlocal missing, safe
        if hit.group(1):
            reference = None
            if source.language == "python" and isinstance(match.node, ast.AST):
                reference = source.python_index.module_reference(hit.group(1), match.node)
            if reference is None:
                missing = True
                return ""
            insertions.extend(reference.insertions)
            safe = safe and reference.safe
            return reference.text
        capture = match.captures.get(hit.group(2))
        if capture is None:
            missing = True
            return ""
        return capture.text

    rendered = _TEMPLATE_VAR.sub(substitute, template)
    return None if missing else (rendered, insertions, safe)


def _message(check: Check, match: Match, source: SourceFile, extra: dict[str, str] | None = None) -> str:
    """The check's message with its captures filled in. Besides the matcher's captures,
    $CODE is the matched code (its first line) and $TARGETS the GPUs the finding holds for."""

    def substitute(hit: re.Match) -> str:
        if not hit.group(2):
            return hit.group(0)
        if extra and hit.group(2) in extra:
            return extra[hit.group(2)]
        capture = match.captures.get(hit.group(2))
        if capture is None and hit.group(2) == "CODE":
            text = source.text[match.start : match.end]
            first = text.split("\n", 1)[0].rstrip()
            return first + (" ..." if "\n" in text else "")
        return capture.text if capture is not None else hit.group(0)

    return _TEMPLATE_VAR.sub(substitute, check.message)


def _edit(source: SourceFile, start: int, end: int, replacement: str) -> Edit:
    (start_line, start_col), (end_line, end_col) = source.position(start), source.position(end)
    return Edit(start, end, replacement, start_line, start_col, end_line, end_col)


def _fix(check: Check, match: Match, source: SourceFile) -> Fix | None:
    rewrite = check.fix.rewrite if check.fix else None
    if rewrite is None:
        return None
    configured = source.target.rocm_version if source.target is not None else None
    if rewrite.rocm_from is not None and configured is not None and configured < rewrite.rocm_from:
        return None  # the rewritten form does not compile on the configured ROCm
    if rewrite.capture:
        target = match.captures.get(rewrite.capture)
        if target is None:
            return None
        start, end = target.start, target.end
    else:
        start, end = match.start, match.end
    rendered = _render(rewrite.template, match, source)
    if rendered is None:
        return None
    replacement, insertions, insertions_safe = rendered
    edits = [_edit(source, start, end, replacement)]
    for insertion in dict.fromkeys(insertions):
        line_start = source.line_starts[insertion.line - 1]
        offset = line_start + len(source.lines[insertion.line - 1]) if insertion.at_line_end else line_start
        edits.append(_edit(source, offset, offset, insertion.text))
    fix = Fix(check.fix.title, rewrite.safety if insertions_safe else "unsafe", tuple(sorted(edits, key=lambda e: e.start)))
    if source.language == "python" and (_inside_f_string(source, start, end) or not _still_parses(source.text, fix)):
        return None
    return fix


def _inside_f_string(source: SourceFile, start: int, end: int) -> bool:
    """Before Python 3.12, the positions `ast` gives inside an f-string are not always those
    of the text, and the quotes a rewrite may use there are limited: no rewrite is offered
    inside one (a finding there keeps its snippet)."""
    if sys.version_info >= (3, 12) or "f" not in source.text.lower():
        return False
    return any(s <= start and end <= e for s, e in source.python_index.f_string_spans)


def _still_parses(text: str, fix: Fix) -> bool:
    """A Python rewrite is offered only when the rewritten file still parses."""
    for edit in sorted(fix.edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def target_gate(check: Check, target) -> tuple[str | None, str | None]:
    """(why the configured target makes this check's hits moot, or None; what $TARGETS says)."""
    spec = check.target
    if spec is None:
        return None, None
    from rocmlint.arch_facts import arch_facts

    if target.rocm_version is not None:
        shown = ".".join(map(str, target.rocm_version))
        if spec.rocm_from is not None and target.rocm_version < spec.rocm_from:
            return f"target: holds from ROCm {'.'.join(map(str, spec.rocm_from))}; the configured ROCm is {shown}", spec.default
        if spec.rocm_before is not None and target.rocm_version >= spec.rocm_before:
            return f"target: holds before ROCm {'.'.join(map(str, spec.rocm_before))}; the configured ROCm is {shown}", spec.default
    if spec.fact is None or not target.archs:
        return None, spec.default
    attribute = spec.fact.replace("-", "_")
    facts = {arch: str(getattr(arch_facts(arch), attribute)) for arch in target.archs}
    affected = [arch for arch, value in facts.items() if value in spec.affected]
    if not affected:
        said = ", ".join(f"{arch} ({spec.fact} {value})" for arch, value in facts.items())
        return f"target: not on the configured GPUs: {said}", spec.default
    return None, ", ".join(affected)


def relevant_checks(source: SourceFile, checks: Iterable[Check]) -> list[Check]:
    """The checks that read the file with a marker in its text: the others cannot match."""
    return [c for c in checks if c.reads(source.language, source.path) and any(m in source.text for m in c.markers)]


def check_source(
    source: SourceFile, checks: Iterable[Check], *, keep_gated: bool = False, relevant: list[Check] | None = None
) -> tuple[list[Finding], list[Problem]]:
    """Run `checks` on one file. Parse failures become Problems, never exceptions.

    Hits in code already gated for one GPU stack are dropped, or with `keep_gated` returned
    with their `gate` reason set (the scanner lists them on request and lets the project
    model look at them again).
    """
    if relevant is None:
        relevant = relevant_checks(source, checks)
    findings: list[Finding] = []
    if not relevant:
        return findings, []
    if source.language == "python":
        try:
            source.python_index
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            # CPython's parser raises MemoryError for code nested too deeply.
            line = getattr(exc, "lineno", None)
            detail = getattr(exc, "msg", None) or str(exc) or "nested too deeply to parse"
            return [], [Problem(source.path, f"Python syntax error: {detail}", line)]
    seen: set[tuple] = set()
    problems: list[Problem] = []
    for check in relevant:
        try:
            findings.extend(_check_one(source, check, keep_gated, seen))
        except BaseException as exc:  # noqa: B036 - ast-grep panics are BaseExceptions
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            # One check's bug must not cost the other checks' findings in this file.
            problems.append(Problem(source.path, f"internal error in {check.id}: {type(exc).__name__}: {exc}", internal=True))
    findings.sort(key=Finding.sort_key)
    return findings, problems


def _check_one(source: SourceFile, check: Check, keep_gated: bool, seen: set[tuple]) -> list[Finding]:
    findings: list[Finding] = []
    moot, targets = target_gate(check, source.target)
    extra = {"TARGETS": targets} if targets is not None else None
    for match in _matcher_for(check).find(source):
        gate = match.gate if check.gated else None
        fixed = None
        if gate is None:
            fixed = moot
            if fixed is None and check.amd_only_gated and source.language == "cpp":
                fixed = source.amd_native
            gate = fixed
        if gate is not None and not keep_gated:
            continue
        line, col = source.position(match.start)
        if source.suppressions.suppressed(line, check.id):
            continue
        key = (check.id, match.start, match.end)
        if key in seen:
            continue
        seen.add(key)
        # A match that takes in its line's newline (`#include` and `#define` lines) ends at
        # the end of that line, not at the start of the next one.
        end = match.end - 1 if match.end > match.start and source.text[match.end - 1] == "\n" else match.end
        end_line, end_col = source.position(end)
        fix = _fix(check, match, source)
        touched = {line, end_line}
        if fix is not None:
            touched.update(n for e in fix.edits for n in (e.start_line, e.end_line))
        findings.append(
            Finding(
                path=source.path,
                check_id=check.id,
                message=_message(check, match, source, extra),
                severity=check.severity,
                line=line,
                col=col,
                end_line=end_line,
                end_col=end_col,
                fix=fix,
                gate=gate,
                gate_fixed=fixed is not None,
                context={n: source.line_text(n) for n in touched},
            )
        )
    return findings


def check_python_tree(tree: ast.AST, path: str, text: str, checks: Iterable[Check], target=None) -> list[Finding]:
    """For the flake8 face: reuse flake8's tree, never parse again."""
    source = SourceFile(path, text, "python", python_tree=tree, target=target)
    findings, _ = check_source(source, checks)
    return findings


def check_file(
    target: Target, checks: Sequence[Check], max_file_size: int, directives: dict | None = None, gpu_target=None, cache=None
) -> tuple[list[Finding], list[Problem]]:
    """All hits of one file, gated ones included (see check_source). When `directives` is a
    dict, a C/C++ file that belongs to a project also leaves its directives there, so that a
    project pass need not read the file again. With a `cache` (rocmlint.result_cache), a
    result kept for the same bytes and inputs is used instead of checking again; its
    directives are then not left (the project pass reads the file itself)."""
    # Imported here, as in scan: the flake8 face checks trees it is given and never needs the
    # file walk (nor its gitignore machinery).
    from rocmlint.discovery import ReadError, read_regular_file

    try:
        data = read_regular_file(target.path, max_file_size)
    except ReadError as exc:
        return [], [Problem(target.path, str(exc))]
    try:
        absolute = os.path.abspath(target.path)
        collect = False
        if directives is not None and target.language == "cpp":
            from rocmlint.project import find_project_root

            collect = find_project_root(os.path.dirname(absolute)) is not None
        key = None
        if cache is not None:
            key = cache.key(target.path, target.language, data, collect)
            if cache.unmarked(key):
                return [], []
            kept = cache.get(key)
            if kept is not None:
                return kept
        source, problem = source_of(target.path, data, target.language, gpu_target)
        if problem is not None:
            return [], [problem]
        if collect:
            from rocmlint.project.includes import file_directives

            directives[absolute] = file_directives(source.text)
        relevant = relevant_checks(source, checks)
        if not relevant:
            if key is not None:
                cache.note_unmarked(key)
            return [], []
        if key is None:
            return check_source(source, checks, keep_gated=True, relevant=relevant)
        from rocmlint.result_cache import record_questions, stop_recording

        questions = record_questions()
        try:
            findings, problems = check_source(source, checks, keep_gated=True, relevant=relevant)
        finally:
            stop_recording()
        if not any(p.internal for p in problems):
            cache.put(key, questions, findings, problems)
        return findings, problems
    except BaseException as exc:  # noqa: B036 - ast-grep panics are BaseExceptions
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return [], [Problem(target.path, f"internal error while checking: {type(exc).__name__}: {exc}", internal=True)]


# --- many files ------------------------------------------------------------------------------

_worker_checks: list[Check] = []
_worker_target = None
_worker_cache = None


def _init_worker(check_ids: list[str], gpu_target, cache) -> None:
    global _worker_checks, _worker_target, _worker_cache
    wanted = set(check_ids)
    _worker_checks = [c for c in load_catalog() if c.id in wanted]
    _worker_target = gpu_target
    _worker_cache = cache


def _check_batch(batch: list[Target], max_file_size: int, collect_directives: bool):
    findings: list[Finding] = []
    problems: list[Problem] = []
    directives: dict | None = {} if collect_directives else None
    for target in batch:
        f, p = check_file(target, _worker_checks, max_file_size, directives, _worker_target, _worker_cache)
        findings.extend(f)
        problems.extend(p)
    unmarked: list[str] = []
    if _worker_cache is not None:
        unmarked, _worker_cache.new_unmarked = _worker_cache.new_unmarked, []
    return findings, problems, directives or {}, unmarked


@dataclass
class ScanRequest:
    paths: list[Path]
    checks: list[Check]
    config: Config
    extra_excludes: tuple[str, ...] = ()
    jobs: int | None = None
    use_project: bool = True  # read the projects' builds to gate code the ROCm build never compiles
    progress: Callable[[int], None] | None = None  # called with the number of files checked so far
    targets: list[Target] | None = None  # files already discovered (then `paths` is not walked)
    cache_dir: str | None = None  # where per-file results are kept between scans (None: nowhere)


def scan(request: ScanRequest) -> ScanResult:
    from rocmlint.discovery import Excludes, find_files

    excludes = Excludes(request.config.exclude + request.extra_excludes, request.config.root)
    languages = {lang for c in request.checks for lang in c.languages}
    if request.targets is not None:
        targets = [t for t in request.targets if t.language in languages]
        result = ScanResult(files_scanned=len(targets))
    else:
        files = find_files(request.paths, excludes, languages)
        targets = files.targets
        result = ScanResult(files_scanned=len(targets) + len(files.problems), problems=list(files.problems), left_out=list(files.left_out))
    for path in request.paths:
        # A file named on the command line that rocmlint cannot read as any language is said
        # so, rather than silently counted as clean.
        if path.is_file() and language_of(str(path)) is None:
            result.problems.append(Problem(path.as_posix(), "not a file type rocmlint checks (see README: which files)"))
    jobs = request.jobs or os.cpu_count() or 1
    max_size = request.config.max_file_size
    cache = None
    if request.cache_dir is not None:
        from rocmlint.result_cache import ResultCache, scan_salt

        cache = ResultCache(request.cache_dir, scan_salt(request.checks, request.config.target))
    # C/C++ directives read in the per-file pass, for the project pass (absolute path -> ...)
    directives: dict | None = {} if request.use_project else None
    if jobs > 1 and len(targets) >= _PARALLEL_THRESHOLD:
        # Imported here: a scan too small for a pool need not pay for importing one.
        from concurrent.futures import ProcessPoolExecutor

        batches = [targets[i : i + 64] for i in range(0, len(targets), 64)]
        jobs = min(jobs, len(batches))  # a process per batch at most: more would only wait
        ids = [c.id for c in request.checks]
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(ids, request.config.target, cache)) as pool:
            count = len(batches)
            for done, (findings, problems, read, unmarked) in enumerate(
                pool.map(_check_batch, batches, [max_size] * count, [request.use_project] * count), start=1
            ):
                result.findings.extend(findings)
                result.problems.extend(problems)
                if cache is not None:
                    cache.new_unmarked.extend(unmarked)
                if directives is not None:
                    directives.update(read)
                if request.progress is not None:
                    request.progress(min(done * 64, len(targets)))
    else:
        for done, target in enumerate(targets, start=1):
            findings, problems = check_file(target, request.checks, max_size, directives, request.config.target, cache)
            result.findings.extend(findings)
            result.problems.extend(problems)
            if request.progress is not None:
                request.progress(done)
    if cache is not None:
        cache.save_unmarked(cache.new_unmarked)
        cache.new_unmarked = []
    if request.use_project:
        result.findings = apply_project_model(result.findings, request.checks, request.config, result.problems, directives)
    hits = result.findings
    result.findings = sorted((f for f in hits if f.gate is None), key=Finding.sort_key)
    result.gated = sorted((f for f in hits if f.gate is not None), key=Finding.sort_key)
    result.problems.sort(key=lambda p: (p.path, p.line or 0, p.reason))
    result.left_out.sort(key=lambda p: (p.path, p.reason))
    return result


# --- the project pass ----------------------------------------------------------------------


def apply_project_model(
    findings: list[Finding], checks: Sequence[Check], config: Config, problems: list[Problem], known: dict | None = None
) -> list[Finding]:
    """Look again at every C/C++ hit with what its project's build says (rocmlint.project):
    hits in files the ROCm build never compiles, under macros the project defines only for
    NVIDIA, or in calls a HIP shim rewrites are gated; hits the file alone took for dead code
    come back when the project defines the macro for HIP. Built only for projects with hits."""
    by_id = {c.id: c for c in checks}
    by_path: dict[str, list[int]] = {}
    for index, finding in enumerate(findings):
        check = by_id.get(finding.check_id)
        if check is not None and check.gated and "cpp" in check.languages and language_of(finding.path) == "cpp":
            by_path.setdefault(finding.path, []).append(index)
    if not by_path:
        return findings  # no C/C++ hit to look at again: the project model is not even imported
    from dataclasses import replace as replaced

    from rocmlint.project import build_model, find_project_root

    overrides = _overrides(config)
    models: dict[str, object] = {}
    for path, indexes in by_path.items():
        absolute = os.path.abspath(path)
        root = find_project_root(os.path.dirname(absolute))
        if root is None:
            declared = overrides.cuda_only(absolute) if overrides and overrides.cuda_only else False
            if declared and not (overrides.rocm_sources and overrides.rocm_sources(absolute)):
                for index in indexes:
                    if findings[index].gate is None:
                        findings[index] = replaced(findings[index], gate=f"CUDA-only: declared in {overrides.where} cuda-only")
            continue
        model = models.get(root)
        if model is None:
            model = models[root] = build_model(root, overrides, known)
            problems.extend(Problem(p.split(":", 1)[0], "build file " + p.split(": ", 1)[-1]) for p in model.problems)
        file_gate = model.file_gate(absolute) or model.nvidia_library_gate(absolute)
        table = model.macros_for(absolute)
        # Read the file's conditions again with the project's macros, where they test one.
        if file_gate is None and (model.tested.get(absolute, frozenset()) & (table.facts.keys() | table.platform)):
            gates = model.gates_for(absolute)
            if gates is not None:
                for index in indexes:
                    if findings[index].gate_fixed:
                        continue
                    amd_side = by_id[findings[index].check_id].check_amd_side
                    findings[index] = replaced(findings[index], gate=gates.reason(findings[index].line, amd_side))
        for index in indexes:
            finding = findings[index]
            if finding.gate is not None:
                continue
            check = by_id[finding.check_id]
            hipified = model.hipify_gate(absolute) if _hipify_rewrites(check.hipify_gated, finding) else None
            defined = next(
                (table.lookup(name) for name in check.project_macro_gate if table.lookup(name).reason), None
            )
            if file_gate is not None:
                findings[index] = replaced(finding, gate=file_gate)
            elif check.amd_only_gated and model.amd_only:
                findings[index] = replaced(finding, gate=model.amd_only)
            elif hipified is not None:
                findings[index] = replaced(finding, gate=hipified)
            elif defined is not None and defined.defined is not False:
                findings[index] = replaced(finding, gate=f"the project defines it for HIP: {defined.reason}")
            elif check.shim_gated:
                callee = _callee_at(finding)
                dropping_mask = check.shim_gated == "mask-dropping"
                shim = model.shim_for(absolute, callee, dropping_mask) if callee else None
                if shim is not None:
                    where = f"{model.relative(shim.path)}:{shim.line}"
                    how = "redefines {} for HIP without its mask" if dropping_mask else "defines {} for HIP"
                    findings[index] = replaced(finding, gate=f"HIP shim: {where} {how.format(callee)}")
    return findings


def _hipify_rewrites(hipify_gated: bool | str, finding: Finding) -> bool:
    """Whether build-time hipify rewrites what the finding flags: always, never, or when the
    flagged text matches the check's pattern of what hipify maps."""
    if isinstance(hipify_gated, bool):
        return hipify_gated
    line = finding.context.get(finding.line, "")
    text = line[finding.col : finding.end_col] if finding.end_line == finding.line else line[finding.col :]
    return re.search(hipify_gated, text) is not None


_CALLEE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def _callee_at(finding: Finding) -> str | None:
    text = finding.context.get(finding.line, "")[finding.col :]
    match = _CALLEE.match(text)
    return match.group(1) if match else None


def _overrides(config: Config):
    """[tool.rocmlint] cuda-only / rocm-sources as path predicates (gitignore-style patterns
    relative to the configuration file)."""
    if not config.cuda_only and not config.rocm_sources:
        return None
    import pathspec

    from rocmlint.project import Overrides

    root = str(config.root.resolve())

    def matcher(patterns: tuple[str, ...]):
        if not patterns:
            return None
        spec = pathspec.GitIgnoreSpec.from_lines(patterns)

        def matches(path: str) -> bool:
            relative = os.path.relpath(path, root)
            return not relative.startswith("..") and spec.match_file(relative.replace(os.sep, "/"))

        return matches

    where = f"{config.path.name if config.path else 'configuration'} [tool.rocmlint]"
    return Overrides(matcher(config.cuda_only), matcher(config.rocm_sources), where)


def apply_fixes(text: str, findings: Iterable[Finding], unsafe: bool) -> tuple[str, int]:
    """Apply the fixes of `findings` to `text`. A fix is applied whole or not at all: one
    whose edits overlap an edit already taken is skipped (an identical edit, such as the same
    `import torch` added by two fixes, is shared). Returns the text and the fixes applied."""
    taken, applied = choose_edits(findings, unsafe)
    for edit in sorted(taken, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text, applied


def choose_edits(findings: Iterable[Finding], unsafe: bool) -> tuple[list[Edit], int]:
    """The edits of the fixes apply_fixes applies (see there), and how many fixes."""
    taken: list[Edit] = []
    applied = 0
    for finding in findings:
        if finding.fix is None or (finding.fix.safety == "unsafe" and not unsafe):
            continue
        new = [e for e in finding.fix.edits if e not in taken]
        if any(_overlap(a, b) for a in new for b in taken):
            continue
        taken.extend(new)
        applied += 1
    return taken, applied


def _overlap(a: Edit, b: Edit) -> bool:
    if a.start < b.end and b.start < a.end:
        return True
    # An insertion where another edit starts or ends would be ordered arbitrarily.
    return (a.start == a.end and b.start <= a.start <= b.end) or (b.start == b.end and a.start <= b.start <= a.end)
