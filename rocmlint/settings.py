"""What each scanned file is checked with: its nearest configuration, with the command line's
options on top (as in ruff), and the checks that selects.

`scan_paths` walks the given paths once, groups the files by the configuration that applies to
each, and runs the engine once per group, so a file in a sub-project with its own
rocmlint.toml or pyproject.toml is checked with that file's settings whatever the order of the
paths on the command line.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

from rocmlint.config import Config, GpuTarget, config_for_file, load_config_file
from rocmlint.findings import Finding, Problem, ScanResult
from rocmlint.records import record, replace


@record
class CommandLine:
    """Settings given on the command line; None: keep what the configuration says."""

    select: tuple[str, ...] | None = None  # replaces the configured `select`
    extend_select: tuple[str, ...] = ()  # added to the selection
    ignore: tuple[str, ...] | None = None  # replaces the configured `ignore`
    extend_ignore: tuple[str, ...] = ()  # added to the configured `ignore`
    exclude: tuple[str, ...] = ()  # gitignore-style, relative to the current directory
    max_file_size: int | None = None
    rocm_version: tuple[int, ...] | None = None
    archs: tuple[str, ...] | None = None
    config_file: Path | None = None  # --config: this file for every scanned file
    isolated: bool = False  # --isolated: no configuration file at all
    preview: bool | None = None  # --preview / --no-preview
    # --per-file-ignores (replaces the configured table) and --extend-per-file-ignores:
    # (gitignore-style pattern relative to the current directory, ids or prefixes)
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    overrides: tuple[tuple[str, object], ...] = ()  # --config KEY=VALUE, read (rocmlint.config.parse_override)


class Settings:
    """Answers "which configuration applies to this file?" for one run."""

    def __init__(self, command_line: CommandLine = CommandLine()):
        self.command_line = command_line
        self._fixed: Config | None = None
        if command_line.isolated:
            self._fixed = Config()
        elif command_line.config_file is not None:
            self._fixed = load_config_file(command_line.config_file)
            if self._fixed.path is None:  # a pyproject.toml without [tool.rocmlint]: its defaults
                self._fixed = Config(root=command_line.config_file.parent)

    def config_for(self, path: str | Path) -> Config:
        base = self._fixed if self._fixed is not None else config_for_file(path)
        return _with_command_line(base, self.command_line)

    def ignored_here(self, config: Config, path: str) -> tuple[str, ...]:
        """What `per-file-ignores` leaves out for `path`: the configuration's, relative to its
        folder, and the command line's, relative to the current directory."""
        codes = config.ignored_here(path)
        given = (self.command_line.per_file_ignores or ()) + self.command_line.extend_per_file_ignores
        if given:
            from rocmlint.config import per_file_codes
            from rocmlint.files.discovery import relative_to_cwd

            relative = relative_to_cwd(path)
            if relative is not None:
                codes += per_file_codes(given, relative)
        return codes


@lru_cache(maxsize=256)
def _with_command_line(config: Config, command_line: CommandLine) -> Config:
    if command_line.overrides:
        from rocmlint.config import with_overrides

        config = with_overrides(config, command_line.overrides)
    changes: dict = {}
    if command_line.per_file_ignores is not None:
        changes["per_file_ignores"] = ()
    if command_line.select is not None:
        # A selection made on the command line starts afresh, the file's extend-select too (as in ruff).
        changes["select"] = command_line.select
        changes["extend_select"] = command_line.extend_select
    elif command_line.extend_select:
        changes["extend_select"] = config.extend_select + command_line.extend_select
    if command_line.ignore is not None:
        changes["ignore"] = command_line.ignore
    if command_line.extend_ignore:
        changes["ignore"] = changes.get("ignore", config.ignore) + command_line.extend_ignore
    if command_line.preview is not None:
        changes["preview"] = command_line.preview
    if command_line.max_file_size is not None:
        changes["max_file_size"] = command_line.max_file_size
    if command_line.rocm_version is not None or command_line.archs is not None:
        changes["target"] = GpuTarget(
            command_line.rocm_version if command_line.rocm_version is not None else config.target.rocm_version,
            command_line.archs if command_line.archs is not None else config.target.archs,
        )
    return replace(config, **changes) if changes else config


@lru_cache(maxsize=256)
def checks_for(config: Config) -> tuple:
    """The checks a configuration selects, in catalog order: `select` (or the checks on by
    default) and `extend-select`, less `ignore`. Raises SelectionError on an unknown id."""
    from rocmlint.catalog.loader import load_catalog
    from rocmlint.engine import select_checks

    if config.select is not None and not config.select and not config.extend_select:
        from rocmlint.engine import SelectionError

        raise SelectionError(f"{config.path} [tool.rocmlint] select names no check: give check ids or prefixes (ALL for every check)")
    select = list(config.select) if config.select is not None else None
    chosen = {c.id for c in select_checks(select, list(config.ignore), preview=config.preview)}
    if config.extend_select:
        chosen |= {c.id for c in select_checks(list(config.extend_select), list(config.ignore), preview=config.preview)}
    return tuple(c for c in load_catalog() if c.id in chosen)


def ignored_in_file(check_id: str, codes: Sequence[str]) -> bool:
    return any(check_id.startswith(code) or code == "ALL" for code in codes)


class _AnyOf:
    """Several exclude lists, each relative to its own folder, read as one."""

    def __init__(self, *excludes):
        self.excludes = excludes

    def excluded(self, path: Path, is_dir: bool) -> bool:
        return self.reason(path, is_dir) is not None

    def reason(self, path, is_dir: bool) -> str | None:
        return next((why for e in self.excludes if (why := e.reason(path, is_dir)) is not None), None)


@lru_cache(maxsize=256)
def excludes_relative_to(patterns: tuple[str, ...], root: Path):
    from rocmlint.files.discovery import Excludes

    return Excludes(patterns, root)


def _targets_by_config(paths: Sequence[Path], settings: Settings, force_exclude: bool, result: ScanResult) -> dict[Config, list]:
    """The files to scan under `paths`, grouped by their configuration; problems and files left
    out go to `result`. A function of its own so that what it needs only while walking (the
    real path of every file found, 11,800 of them in the torch package) is freed before the
    files are checked."""
    from rocmlint.files.discovery import find_files
    from rocmlint.files.languages import language_of

    command_line_excludes = excludes_relative_to(settings.command_line.exclude, Path.cwd().resolve())
    groups: dict[Config, list] = {}
    configs: dict[str, Config] = {}
    # The real path of every file found: a file reached twice (named twice, or through a
    # link) is scanned once.
    seen: set[str] = set()
    for given in paths:
        if given.is_file() and language_of(str(given)) is None:
            # Said so, rather than silently counted as clean.
            result.problems.append(Problem(given.as_posix(), "not a file type rocmlint checks (see README: which files)"))
            continue
        top = settings.config_for(given)
        walk_excludes = _AnyOf(excludes_relative_to(top.exclude, top.root), command_line_excludes)
        explicit = not given.is_dir()
        files = find_files([given], walk_excludes, seen=seen)
        result.problems.extend(files.problems)
        result.left_out.extend(files.left_out)
        result.files_scanned += len(files.problems)
        for target in files.targets:
            # A file's configuration is its folder's: looked up once per folder.
            folder = os.path.dirname(target.path)
            config = configs.get(folder)
            if config is None:
                config = configs[folder] = settings.config_for(target.path)
            if explicit and force_exclude:
                excluded = _AnyOf(excludes_relative_to(config.exclude, config.root), command_line_excludes).excluded(Path(target.path), False)
            elif not explicit and config != top:
                excluded = excludes_relative_to(config.exclude, config.root).excluded(Path(target.path), False)
            else:
                excluded = False
            if not excluded:
                groups.setdefault(config, []).append(target)
    return groups


def files_to_scan(paths: Sequence[Path], settings: Settings, force_exclude: bool = False) -> tuple[list[str], list[Problem]]:
    """The files a scan of `paths` would check (in a language one of their checks reads), and
    what could not be read: what `--show-files` lists."""
    result = ScanResult()
    groups = _targets_by_config(paths, settings, force_exclude, result)
    files = []
    for config, targets in groups.items():
        languages = {lang for check in checks_for(config) for lang in check.languages}
        files.extend(t.path for t in targets if t.language in languages)
    return files, result.problems


def scan_paths(
    paths: Sequence[Path],
    settings: Settings,
    *,
    jobs: int | None = None,
    use_project: bool = True,
    force_exclude: bool = False,
    progress: Callable[[int, int], None] | None = None,
    cache_dir: str | None = None,
    honour_noqa: bool = True,
) -> tuple[ScanResult, list]:
    """Scan `paths`, each file with its own configuration. Returns the merged result and every
    check that ran on some file (for reporters that list the rules).

    A file named on the command line is scanned even when a configuration excludes it, unless
    `force_exclude` (what pre-commit hooks need: they name every changed file). With a
    `cache_dir`, per-file results are kept there between scans (rocmlint.files.result_cache)."""
    from rocmlint.catalog.loader import load_catalog
    from rocmlint.engine import ScanRequest, scan

    result = ScanResult()
    groups = _targets_by_config(paths, settings, force_exclude, result)
    checks_by_config = {config: checks_for(config) for config in groups}
    languages_by_config = {config: {lang for c in checks for lang in c.languages} for config, checks in checks_by_config.items()}
    work = {config: [t for t in targets if t.language in languages_by_config[config]] for config, targets in groups.items()}
    total = sum(len(files) for files in work.values())
    done = 0
    for config, files in work.items():
        if not files:
            continue
        part = scan(
            ScanRequest(
                [], list(checks_by_config[config]), config, (), jobs, use_project=use_project,
                progress=_offset_progress(progress, done, total), targets=files, cache_dir=cache_dir, scan_roots=list(paths),
                honour_noqa=honour_noqa,
            )
        )
        done += len(files)
        ignored = {path: settings.ignored_here(config, path) for path in {f.path for f in part.findings + part.gated}}
        result.findings.extend(f for f in part.findings if not ignored_in_file(f.check_id, ignored[f.path]))
        result.gated.extend(f for f in part.gated if not ignored_in_file(f.check_id, ignored[f.path]))
        result.problems.extend(part.problems)
        result.files_scanned += part.files_scanned
    result.findings.sort(key=Finding.sort_key)
    result.gated.sort(key=Finding.sort_key)
    result.problems.sort(key=lambda p: p.path)
    if groups:
        used = {c.id for checks in checks_by_config.values() for c in checks}
    else:  # nothing to scan: the rules are those of the first path's configuration
        used = {c.id for c in checks_for(settings.config_for(paths[0] if paths else Path(".")))}
    return result, [c for c in load_catalog() if c.id in used]


def _offset_progress(progress, offset: int, total: int):
    """The engine counts the files of one group; the user sees the files of the whole run."""
    if progress is None:
        return None
    return lambda count: progress(offset + count, total)
