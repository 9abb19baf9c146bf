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
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from rocmlint.catalog.loader import PROJECT_KIND_NAMES, Check, load_catalog
from rocmlint.config import Config
from rocmlint.cpp.astgrep import PROJECT_DECIDES
from rocmlint.findings import Finding, Problem, ScanResult
from rocmlint.files.languages import language_of
from rocmlint.fixes.edits import TEMPLATE_VAR, fix_for
from rocmlint.matchers import Match, Matcher
from rocmlint.records import record
from rocmlint.source import SourceFile

if TYPE_CHECKING:
    from rocmlint.files.discovery import Target

# A file is binary when its first block holds a NUL byte (what git and grep assume too).
_BINARY_PROBE = 8192
# Below this many files a process pool costs more than it saves.
_PARALLEL_THRESHOLD = 200
# Files per task of a worker process. A few files cost much more than the others (CI and
# build files, large modules: up to a quarter of a second each), and the scan ends when the
# last task does: smaller tasks spread them better (vLLM's files timed one by one: the
# slowest task of 64 files costs 1.5 times a 16th of the whole pass, of 32 files 0.9 times).
_BATCH = 32
# From this many worker processes on, they read the files of the import graph for the project
# pass beside them (ProjectPassAlongside.read_import_graphs_in); with fewer, its thread reads
# them. The per-file pass costs about 1.7 ms a Python file (3 ms a file of any kind), the
# graph about 0.4 ms a Python file on one thread: with few workers the thread is done before
# them and the graph's files would only lengthen their share (SGLang on 2 cores: 4% slower),
# with many the thread is what the scan waits for (vLLM on 16 cores: a quarter faster).
_GRAPH_IN_WORKERS = 8


class SelectionError(ValueError):
    """A --select/--ignore value that names no check."""


# --- which checks run ------------------------------------------------------------------------


def select_checks(
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    catalog: Sequence[Check] | None = None,
    preview: bool = False,
) -> list[Check]:
    """Checks chosen by id prefixes. No `select`: every check enabled by default.

    A selector matches an id or an id prefix ("ROCM0" picks ROCM001-ROCM099); "ALL" picks all.
    Explicitly selected checks run even when off by default. Unknown selectors are errors.
    Checks in preview on every kind of project (measured right less than 9 times in 10 on
    each) run only with `preview`, whatever selects them, as in ruff; see preview_gate for
    checks in preview on one kind.
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
    return [c for c in chosen if not any(matches(s, c) for s in ignore) and (preview or not c.preview)]


def compile_matcher(check: Check) -> Matcher:
    """The check's matcher, its spec validated (the Python and C/C++ matchers live with their
    language). Raises CheckFileError naming the check file."""
    from rocmlint.catalog.loader import CheckFileError

    kind, spec = check.matcher_kind, check.matcher_spec
    where = f"{check.source}: match.{kind}"
    if kind == "python":
        from rocmlint.python.matcher import PythonMatcher

        return PythonMatcher(spec, where, by_module_name=not check.breaks_nvidia)
    if kind == "ast-grep":
        from rocmlint.cpp.astgrep import AstGrepMatcher, metavariables

        rewrite = check.fix.rewrite if check.fix else None
        names = metavariables(check.message, rewrite.template if rewrite else None)
        if rewrite and rewrite.capture and rewrite.capture not in names:
            names += (rewrite.capture,)
        return AstGrepMatcher(spec, where, names, check.check_amd_side, check.hip_only)
    if kind == "text":
        from rocmlint.matchers.text import TextMatcher

        return TextMatcher(spec, where, check.check_amd_side)
    if kind == "function":
        from rocmlint.matchers.function import FunctionMatcher

        return FunctionMatcher(spec, where, check.check_amd_side)
    raise CheckFileError(f"{where}: unknown matcher kind")


_matcher_for = lru_cache(maxsize=None)(compile_matcher)


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
        if capture is None:
            return hit.group(0)
        # Code over several lines is quoted on one line (runs of white space made one space):
        # a message is one line in text output, an editor's hover and a SARIF result.
        return " ".join(capture.text.split()) if "\n" in capture.text else capture.text

    template = check.message_when.get(match.variant, check.message) if match.variant else check.message
    return TEMPLATE_VAR.sub(substitute, template)


def preview_gate(check: Check, path: str) -> str | None:
    """Why a hit of `check` in the file at `path` is not reported without preview: the check is
    in preview on the kind of project the file belongs to (measured right less than 9 times in
    10 there, docs/precision.md). None when it is not."""
    if not check.preview_kinds:
        return None
    from rocmlint.build.project_root import project_kind

    kind = project_kind(path)
    if kind not in check.preview_kinds:
        return None
    counts = next(f"{true}/{decided}" for k, true, decided in check.measured if k == kind)
    return f"preview on {PROJECT_KIND_NAMES[kind]}: measured right {counts} there (--preview runs it)"


def target_gate(check: Check, target) -> tuple[str | None, str | None]:
    """(why the configured target makes this check's hits moot, or None; what $TARGETS says)."""
    spec = check.target
    if spec is None:
        return None, None
    from rocmlint.catalog.arch_facts import arch_facts

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


def text_test(check: Check):
    """The check's test of a Python file's text (rocmlint.python.prefilter), or None where its
    markers are its only test."""
    if "python" not in check.languages:
        return None
    from rocmlint.python import prefilter

    if check.matcher_kind == "python":
        return prefilter.text_test(check.matcher_spec)
    if check.matcher_kind == "function":
        return prefilter.function_test(check.matcher_spec.get("function"))
    return None


_text_test_for = lru_cache(maxsize=None)(text_test)


def relevant_checks(source: SourceFile, checks: Iterable[Check]) -> list[Check]:
    """The checks that can match the file: they read it, a marker of theirs is in its text,
    and, for a Python file, their text test finds what they match spelled in it (see
    rocmlint.python.prefilter). The others are not run, and a file no check can match is not
    parsed. A Python module a build check reads only as a build helper must also look like
    one in its text (rocmlint.build.python_build): most modules do not, and are then never
    parsed for it."""
    if source.language != "python":
        return [c for c in checks if c.reads(source.language, source.path) and any(m in source.text for m in c.markers)]
    from rocmlint.python.prefilter import PythonText

    # One reader of the text for the markers and the tests: each word is looked for once.
    text = PythonText(source.text)
    relevant = []
    for check in checks:
        if not check.reads("python", source.path) or not any(text.has_marker(m) for m in check.markers):
            continue
        test = _text_test_for(check)
        if test is None or test(text):
            relevant.append(check)
    if any(c.python_build_helpers for c in relevant):
        from rocmlint.build.python_build import may_be_build_helper

        if not may_be_build_helper(source.path, source.text):
            name = os.path.basename(source.path)
            relevant = [c for c in relevant if not c.python_build_helpers or name in c.python_file_names]
    return relevant


def check_source(
    source: SourceFile,
    checks: Iterable[Check],
    *,
    keep_gated: bool = False,
    relevant: list[Check] | None = None,
    honour_noqa: bool = True,
) -> tuple[list[Finding], list[Problem]]:
    """Run `checks` on one file. Parse failures become Problems, never exceptions.

    Hits in code already gated for one GPU stack are dropped, or with `keep_gated` returned
    with their `gate` reason set (the scanner lists them on request and lets the project
    model look at them again). Without `honour_noqa` (--ignore-noqa), suppression comments,
    the file-level ones too, are read as plain comments.
    """
    if relevant is None:
        relevant = relevant_checks(source, checks)
    if honour_noqa and relevant:
        from rocmlint.noqa.comments import file_level_noqa

        exempted = file_level_noqa(source.text, source.language)
        if exempted is not None:
            relevant = [c for c in relevant if not ("*" in exempted or any(c.id.startswith(code) for code in exempted))]
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
            findings.extend(_check_one(source, check, keep_gated, seen, honour_noqa))
        except BaseException as exc:  # noqa: B036 - ast-grep panics are BaseExceptions
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            # One check's bug must not cost the other checks' findings in this file.
            problems.append(Problem(source.path, f"internal error in {check.id}: {type(exc).__name__}: {exc}", internal=True))
    # A build file whose build the checks walked and could not fully read (only where one of
    # them asked for the file's build view: a cached property, built at most once).
    view = source.__dict__.get("build_view")
    if view is not None and view.not_fully_read:
        problems.append(Problem(source.path, f"build file not fully read: {view.not_fully_read}; what it builds is unknown"))
    findings.sort(key=Finding.sort_key)
    return findings, problems


def _check_one(source: SourceFile, check: Check, keep_gated: bool, seen: set[tuple], honour_noqa: bool = True) -> list[Finding]:
    findings: list[Finding] = []
    moot, targets = target_gate(check, source.target)
    extra = {"TARGETS": targets} if targets is not None else None
    # A check that reads both sides of every stack test (`gated: false`) still leaves alone
    # build files of another project vendored into this one: this project never runs them.
    # Asked once, at the first hit: the answer walks the folders above the file. Its matcher's
    # own reasons (`match.gate`, never a stack test there) still apply.
    vendored: list[str | None] = []
    for match in _matcher_for(check).find(source):
        if check.gated:
            gate = match.gate
        else:
            if not vendored:
                from rocmlint.build.files import vendored_reason

                vendored.append(vendored_reason(source.path) if source.language not in ("python", "cpp") else None)
            gate = vendored[0] or match.gate
        fixed = None
        if gate is None or gate in PROJECT_DECIDES:
            # A gate the project pass may lift must not hide that the target or the file
            # itself settles the hit: those win.
            fixed = moot
            if fixed is None and check.amd_only_gated and source.language == "cpp":
                fixed = source.amd_native
            gate = fixed or gate
        if gate is not None and not keep_gated:
            continue
        line, col = source.position(match.start)
        if honour_noqa and source.suppressions.suppressed(line, check.id):
            continue
        key = (check.id, match.start, match.end)
        if key in seen:
            continue
        seen.add(key)
        # A match that takes in its line's newline (`#include` and `#define` lines) ends at
        # the end of that line, not at the start of the next one.
        end = match.end - 1 if match.end > match.start and source.text[match.end - 1] == "\n" else match.end
        end_line, end_col = source.position(end)
        fix = fix_for(check, match, source)
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


def check_source_kept(source: SourceFile, data: bytes, checks: Sequence[Check], cache) -> tuple[list[Finding], list[Problem]]:
    """check_source with `keep_gated`, through a result cache (rocmlint.files.result_cache):
    the result kept for the same bytes (`data`, the text's bytes as read) and inputs, else the
    text checked and its result kept. For text that is not read by check_file (the language
    server's documents); its C/C++ directives are never collected."""
    key = cache.key(source.path, source.language, data, False)
    kept = cache.get(key)
    if kept is not None:
        return kept
    return _checked_and_kept(source, checks, cache, key, None)


def _checked_and_kept(source: SourceFile, checks, cache, key: str, relevant, signature_key: str | None = None) -> tuple[list[Finding], list[Problem]]:
    from rocmlint.files.result_cache import record_questions, stop_recording

    questions = record_questions()
    try:
        findings, problems = check_source(source, checks, keep_gated=True, relevant=relevant)
    finally:
        stop_recording()
    if not any(p.internal for p in problems) and cache.put(key, source.path, questions, findings, problems):
        cache.note_signature(signature_key, source.path, key)
    return findings, problems


def _collects_directives(target: Target, absolute: str, directives: dict | None) -> bool:
    """Whether check_file leaves this file's C/C++ directives for the project pass: a C/C++
    file of a project, in a scan that runs the pass."""
    if directives is None or target.language != "cpp":
        return False
    from rocmlint.files.project_start import find_project_root

    return find_project_root(os.path.dirname(absolute)) is not None


def _settled_signature_key(target: Target, absolute: str, collect: bool, cache, max_file_size: int) -> str | None:
    """The key of the file's signature as it is now (ResultCache.signature_key), or None: where
    the file changed within RACY_NANOSECONDS of now (it could change again within the same
    tick of its file system's clock and keep that signature with other bytes; a signature
    kept earlier cannot be this one), or is over `max_file_size` (which no key covers: it is
    read, to be said so). Taken before the file is read: a change during or after the read
    gives it another signature."""
    import time

    from rocmlint.files.tree import RACY_NANOSECONDS, file_signature

    now = time.time_ns()
    signature = file_signature(target.path)
    if signature is None or (max_file_size and signature[0] > max_file_size):
        return None
    if max(signature[1], signature[2]) >= now - RACY_NANOSECONDS:
        return None
    return cache.signature_key(target.path, target.language, collect, signature, absolute)


def check_python_tree(tree: ast.AST, path: str, text: str, checks: Iterable[Check], target=None) -> list[Finding]:
    """For the flake8 face: reuse flake8's tree, never parse again."""
    source = SourceFile(path, text, "python", python_tree=tree, target=target)
    findings, _ = check_source(source, checks)
    return findings


def check_file(
    target: Target,
    checks: Sequence[Check],
    max_file_size: int,
    directives: dict | None = None,
    gpu_target=None,
    cache=None,
    honour_noqa: bool = True,
) -> tuple[list[Finding], list[Problem]]:
    """All hits of one file, gated ones included (see check_source). When `directives` is a
    dict, a C/C++ file that belongs to a project also leaves its directives there, so that a
    project pass need not read the file again. With a `cache` (rocmlint.files.result_cache), a
    result kept for the same bytes and inputs is used instead of checking again, found by the
    file's signature without reading it where it can be; its directives are then not left
    (the project pass reads the file itself)."""
    # Imported here, as in scan: the flake8 face checks trees it is given and never needs the
    # file walk (nor its gitignore machinery).
    from rocmlint.files.discovery import ReadError, read_regular_file

    try:
        absolute = os.path.abspath(target.path)
        collect = _collects_directives(target, absolute, directives)
        signature_key = None  # where the file had settled before it was read (result_cache: signatures)
        if cache is not None:
            signature_key = _settled_signature_key(target, absolute, collect, cache, max_file_size)
            signed = cache.by_signature(signature_key) if signature_key is not None else None
            kept = cache.kept(signed) if signed is not None else None
            if kept is not None:
                return kept
        try:
            data = read_regular_file(target.path, max_file_size)
        except ReadError as exc:
            return [], [Problem(target.path, str(exc))]
        key = None
        if cache is not None:
            key = cache.key(target.path, target.language, data, collect, absolute)
            kept = cache.kept(key)
            if kept is not None:
                cache.note_signature(signature_key, target.path, key)
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
                cache.note_unmarked(key, target.path)
                cache.note_signature(signature_key, target.path, key)
            return [], []
        if key is None:
            return check_source(source, checks, keep_gated=True, relevant=relevant, honour_noqa=honour_noqa)
        return _checked_and_kept(source, checks, cache, key, relevant, signature_key)
    except BaseException as exc:  # noqa: B036 - ast-grep panics are BaseExceptions
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return [], [Problem(target.path, f"internal error while checking: {type(exc).__name__}: {exc}", internal=True)]


# --- many files ------------------------------------------------------------------------------

_worker_checks: list[Check] = []
_worker_target = None
_worker_cache = None
_worker_honours_noqa = True


def _init_worker(check_ids: list[str], gpu_target, cache, honour_noqa: bool = True) -> None:
    global _worker_checks, _worker_target, _worker_cache, _worker_honours_noqa
    wanted = set(check_ids)
    _worker_checks = [c for c in load_catalog() if c.id in wanted]
    _worker_target = gpu_target
    _worker_cache = cache
    _worker_honours_noqa = honour_noqa


def _check_batch(batch: list[Target], max_file_size: int, collect_directives: bool):
    findings: list[Finding] = []
    problems: list[Problem] = []
    directives: dict | None = {} if collect_directives else None
    for target in batch:
        f, p = check_file(target, _worker_checks, max_file_size, directives, _worker_target, _worker_cache, _worker_honours_noqa)
        findings.extend(f)
        problems.extend(p)
    kept = _worker_cache.take_made() if _worker_cache is not None else None
    return findings, problems, directives or {}, kept


def apply_preview(findings: list[Finding], checks: Sequence[Check]) -> list[Finding]:
    """Hits of checks in preview on the kind of project their file belongs to, gated with
    that reason (see preview_gate)."""
    from rocmlint.records import replace as replaced

    by_id = {c.id: c for c in checks if c.preview_kinds}
    if not by_id:
        return findings
    kept = []
    for finding in findings:
        check = by_id.get(finding.check_id)
        why = preview_gate(check, finding.path) if check is not None and finding.gate is None else None
        kept.append(replaced(finding, gate=why) if why else finding)
    return kept


@record(mutable=True)
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
    # The paths the user asked to scan (default: `paths`): outside git, no project root is above them.
    scan_roots: Sequence[Path] | None = None
    honour_noqa: bool = True  # False (--ignore-noqa): suppression comments are plain comments


def scan(request: ScanRequest) -> ScanResult:
    import time

    from rocmlint.files.discovery import Excludes, find_files

    started = time.time_ns()  # files changed after this may differ from what the per-file pass read

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
    # Kept results are those of a scan that honours noqa comments: --ignore-noqa checks afresh.
    if request.cache_dir is not None and request.honour_noqa:
        from rocmlint.files.result_cache import ResultCache, scan_salt

        cache = ResultCache(request.cache_dir, scan_salt(request.checks, request.config.target), frozenset(c.id for c in request.checks))
    scanned = request.scan_roots if request.scan_roots is not None else request.paths
    # C/C++ directives read in the per-file pass, for the project pass (absolute path -> ...)
    directives: dict | None = {} if request.use_project else None
    alongside = reading = None  # the project pass run beside the per-file pass, and its recording
    if jobs > 1 and len(targets) >= _PARALLEL_THRESHOLD:
        # Imported here: a scan too small for a pool need not pay for importing one.
        from concurrent.futures import ProcessPoolExecutor

        batches = [targets[i : i + _BATCH] for i in range(0, len(targets), _BATCH)]
        jobs = min(jobs, len(batches))  # a process per batch at most: more would only wait
        ids = [c.id for c in request.checks]
        if request.use_project:
            # While the workers check files, the main process would only wait: it runs the
            # project pass on the hits as they come in, and one worker first reads the build.
            # Not where a kept pass may hold (a warm re-scan reads nothing the pass read before,
            # rocmlint.project.kept).
            from rocmlint.project import kept
            from rocmlint.project.gating import ProjectPassAlongside

            if cache is None or not kept.has_kept_pass(cache, request.config, scanned):
                reading = kept.start_recorded_pass(cache) if cache is not None else None
                alongside = ProjectPassAlongside(request.checks, request.config, scanned)
        try:
            with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(ids, request.config.target, cache, request.honour_noqa)) as pool:
                if alongside is not None:
                    recorded_under = cache.directory if reading is not None else None
                    if any(t.language == "cpp" for t in targets):
                        alongside.read_models_ahead(pool, recorded_under)
                    if jobs >= _GRAPH_IN_WORKERS:
                        alongside.read_import_graphs_in(pool, recorded_under)
                count = len(batches)
                checked = pool.map(_check_batch, batches, [max_size] * count, [request.use_project] * count)
                if alongside is not None:
                    alongside.start()
                for done, (findings, problems, read, kept_results) in enumerate(checked, start=1):
                    result.findings.extend(findings)
                    result.problems.extend(problems)
                    if cache is not None:
                        cache.add_made(*kept_results)
                    if directives is not None:
                        directives.update(read)
                    if alongside is not None:
                        alongside.give(findings, read)
                    if request.progress is not None:
                        request.progress(min(done * _BATCH, len(targets)))
        except BaseException:
            if alongside is not None:
                alongside.stop()
            if reading is not None:
                from rocmlint.files.tree import stop_reading

                stop_reading()
            raise
    else:
        for done, target in enumerate(targets, start=1):
            findings, problems = check_file(
                target, request.checks, max_size, directives, request.config.target, cache, request.honour_noqa
            )
            result.findings.extend(findings)
            result.problems.extend(problems)
            if request.progress is not None:
                request.progress(done)

    def project_pass(hits: list[Finding], known: dict | None) -> list[Finding]:
        if alongside is not None:
            hits = alongside.finish(hits, result.problems, known)
        elif request.use_project:
            from rocmlint.project.gating import apply_project_model

            hits = apply_project_model(hits, request.checks, request.config, result.problems, known, scanned)
        if not request.config.preview:
            hits = apply_preview(hits, request.checks)
        return hits

    if cache is not None and request.use_project:
        from rocmlint.project.kept import kept_project_pass

        result.findings = kept_project_pass(
            cache, project_pass, result.findings, result.problems, directives, request.config, scanned, started, reading
        )
    else:
        result.findings = project_pass(result.findings, directives)
    if cache is not None:
        cache.save()
    hits = result.findings
    result.findings = sorted((f for f in hits if f.gate is None), key=Finding.sort_key)
    result.gated = sorted((f for f in hits if f.gate is not None), key=Finding.sort_key)
    result.problems.sort(key=lambda p: (p.path, p.line or 0, p.reason))
    result.left_out.sort(key=lambda p: (p.path, p.reason))
    return result
