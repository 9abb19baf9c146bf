"""`rocmlint scan -`: check text read from standard input, as editors and formatters hand it.

`--stdin-filename PATH` says what the text is: its language comes from the name, its
configuration from the folder (as for a file there), and reports name it. Without a name the
text is taken as Python and shown as `-`. The text is never written anywhere (a caller that
passes `cache_dir` has its result kept there, as a scan keeps a file's).
"""

from __future__ import annotations

import os
from pathlib import Path

from rocmlint.findings import Problem, ScanResult


def scan_text(
    data: bytes, filename: str | None, settings, *, use_project: bool = True, force_exclude: bool = False, honour_noqa: bool = True,
    models: dict | None = None, import_graphs: dict | None = None, scan_roots=None, cache_dir: str | None = None,
) -> ScanResult:
    """Check `data` as the file `filename` (see the module docstring). `models`, `import_graphs`:
    project models and Python import graphs kept by the caller between calls, by project root; `scan_roots`: the folders the user
    works in (outside git, no project starts above them); see rocmlint.project.gating.
    `cache_dir`: read and keep the per-file result there (rocmlint.files.result_cache), for
    text the caller knows to be the file's as saved."""
    from rocmlint.engine import apply_preview, check_source
    from rocmlint.project.gating import apply_project_model
    from rocmlint.findings import Finding
    from rocmlint.files.languages import language_of
    from rocmlint.settings import excludes_relative_to, checks_for, ignored_in_file
    from rocmlint.source import SourceFile

    shown = filename or "-"
    result = ScanResult()
    language = language_of(filename) if filename else "python"
    if language is None:
        result.problems.append(Problem(shown, "not a file type rocmlint checks (see README: which files)"))
        return result
    config = settings.config_for(filename or os.path.join(os.getcwd(), "-"))
    if filename and force_exclude:
        excludes = (excludes_relative_to(config.exclude, config.root), excludes_relative_to(settings.command_line.exclude, Path.cwd().resolve()))
        if any(e.excluded(Path(filename), False) for e in excludes):
            return result
    checks = [c for c in checks_for(config) if language in c.languages]
    result.files_scanned = 1 if checks else 0
    if not checks:
        return result
    if config.max_file_size and len(data) > config.max_file_size:
        result.problems.append(Problem(shown, f"{len(data)} bytes is over the size limit of {config.max_file_size} bytes (max-file-size)"))
        return result
    if b"\0" in data[:8192]:
        result.problems.append(Problem(shown, "binary input (NUL byte)"))
        return result
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        result.problems.append(Problem(shown, f"not valid UTF-8 (byte {exc.start}, line {line})", line))
        return result
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    source = SourceFile(shown, text, language, target=config.target)
    try:
        if cache_dir is not None and honour_noqa:
            from rocmlint.engine import check_source_kept
            from rocmlint.files.result_cache import ResultCache, scan_salt

            cache = ResultCache(cache_dir, scan_salt(checks, config.target), frozenset(c.id for c in checks))
            hits, problems = check_source_kept(source, data, checks, cache)
            cache.save()
        else:
            hits, problems = check_source(source, checks, keep_gated=True, honour_noqa=honour_noqa)
    except BaseException as exc:  # noqa: B036 - ast-grep panics are BaseExceptions
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        hits, problems = [], [Problem(shown, f"internal error while checking: {type(exc).__name__}: {exc}")]
    result.problems.extend(problems)
    if use_project and filename:
        hits = apply_project_model(
            hits, checks, config, result.problems, scanned=scan_roots, models=models, import_graphs=import_graphs
        )
    if not config.preview:
        hits = apply_preview(hits, checks) if filename else [h for h in hits if not _in_preview_anywhere(h, checks)]
    ignored = settings.ignored_here(config, filename) if filename else ()
    hits = [h for h in hits if not ignored_in_file(h.check_id, ignored)]
    result.findings = sorted((h for h in hits if h.gate is None), key=Finding.sort_key)
    result.gated = sorted((h for h in hits if h.gate is not None), key=Finding.sort_key)
    return result


def _in_preview_anywhere(hit, checks) -> bool:
    """Text with no file name belongs to no project: a check in preview on any kind of project
    is left out."""
    return any(c.id == hit.check_id and c.preview_kinds for c in checks)
