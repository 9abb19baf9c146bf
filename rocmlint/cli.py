"""The `rocmlint` command: scan (also named `check`, as in ruff), rules, explain, doctor.

Exit codes: 0 nothing found, 1 findings reported, 2 usage, configuration or internal error.

Options are spelled out in full (no abbreviations: a new option must not change what an old
script means), and `scan` takes its paths before, after or between its options.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rocmlint import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


def _ids(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


# Formats with ruff's names where the format is the same thing: `concise` is rocmlint's `text`,
# `full` is text with each finding's fix-it (--show-fix).
OUTPUT_FORMATS = ("text", "json", "sarif", "github", "gitlab", "junit", "concise", "full", "json-lines", "rdjson", "pylint", "azure")


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, given the terminal's width as `shutil.get_terminal_size` finds
    it: argparse asks `shutil` itself, whose import (bz2, lzma and more) every scan would pay for,
    as argparse makes a formatter for each option it is given."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        if width is None:
            try:
                columns = int(os.environ["COLUMNS"])
            except (KeyError, ValueError):
                columns = 0
            if columns <= 0:
                try:
                    columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
                except (AttributeError, ValueError, OSError):
                    columns = 80
            width = (columns if columns > 0 else 80) - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        formatter_class=_HelpFormatter,
        prog="rocmlint",
        allow_abbrev=False,
        description="Find the code that breaks or slows down when a CUDA/NVIDIA project moves to AMD GPUs (ROCm/HIP).",
        epilog="Exit codes: 0 no findings, 1 findings, 2 usage or internal error. Docs per check: rocmlint explain ROCM001",
    )
    parser.add_argument("-V", "--version", action="version", version=f"rocmlint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    scan = commands.add_parser(
        "scan",
        formatter_class=_HelpFormatter,
        aliases=["check"],
        allow_abbrev=False,
        help="scan files and directories (`check` is the same command)",
        description="Scan Python, CUDA/HIP C++ and build files for ROCm portability pitfalls.",
        epilog="Configuration: each file is checked with the nearest rocmlint.toml, or pyproject.toml with [tool.rocmlint], "
        "above it (keys: select, extend-select, ignore, per-file-ignores, exclude, extend-exclude, max-file-size, cuda-only, "
        "rocm-sources, rocm-version, arch; .rocmlint.toml is read too). Command-line --select/--ignore/--rocm-version/--arch replace the configured values; "
        "--extend-select, --extend-ignore and --exclude add to them. Before reporting C/C++ "
        "hits, rocmlint reads the project's CMake files, setup.py and Makefiles to learn which files the "
        "ROCm build compiles (--no-project turns this off; --show-gated lists what it gated).",
    )
    scan.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .)")
    scan.add_argument(
        "--format",
        "--output-format",
        dest="format",
        choices=OUTPUT_FORMATS,
        default="text",
        help="output format (default: text; concise is text; full is text with each fix-it; json-lines, rdjson, pylint "
        "and azure as ruff writes them)",
    )
    scan.add_argument("-o", "--output", "--output-file", dest="output", metavar="FILE", help="write the report to FILE instead of standard output")
    scan.add_argument("--select", action="append", metavar="IDS", help="comma-separated check ids or prefixes to run (e.g. ROCM001,ROCM2)")
    scan.add_argument("--ignore", action="append", metavar="IDS", help="comma-separated check ids or prefixes to leave out")
    scan.add_argument(
        "--exclude",
        "--extend-exclude",
        dest="exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help="gitignore-style pattern of paths to skip, added to the configured ones (repeatable)",
    )
    scan.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings are reported")
    scan.add_argument("--show-fix", action="store_true", help="text format: print each finding's fix-it snippet")
    scan.add_argument("--fix", action="store_true", help="apply safe automatic fixes in place")
    scan.add_argument("--unsafe-fixes", action="store_true", help="with --fix, also apply unsafe fixes")
    scan.add_argument(
        "--config",
        action="append",
        metavar="FILE|KEY=VALUE",
        help="read the configuration from FILE (a pyproject.toml with [tool.rocmlint], or a rocmlint.toml) for every file; "
        "or, as in ruff, a TOML `key = value` (e.g. 'select = [\"ROCM0\"]') that takes the place of the configured value "
        "(repeatable)",
    )
    scan.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    scan.add_argument("--max-file-size", type=int, metavar="BYTES", help="skip larger files (0: no limit; default 1 MiB)")
    scan.add_argument("-j", "--jobs", type=int, metavar="N", help="worker processes (default: one per CPU)")
    scan.add_argument("-q", "--quiet", action="store_true", help="do not print skipped files on standard error")
    scan.add_argument(
        "--show-gated",
        action="store_true",
        help="also list the hits that are not reported because the code is gated for one GPU stack or the ROCm "
        "build never compiles it, each with its reason (text, json; SARIF as suppressed results)",
    )
    scan.add_argument(
        "--rocm-version",
        metavar="X.Y",
        help="the ROCm release the port targets, e.g. 6.4 (replaces [tool.rocmlint] rocm-version)",
    )
    scan.add_argument(
        "--arch",
        action="append",
        metavar="GFX",
        help="comma-separated AMD GPU targets the port targets, e.g. gfx942,gfx1100 (replaces [tool.rocmlint] arch); "
        "checks whose truth depends on the GPU (fp8 types, wave size, TF32) then speak of these only",
    )
    scan.add_argument(
        "--no-project",
        action="store_true",
        help="do not read the projects' build files: judge each file on its own",
    )
    scan.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="keep per-file results in DIR between scans (default: $ROCMLINT_CACHE_DIR, else a folder per project in "
        "$XDG_CACHE_HOME/rocmlint/results, else ~/.cache/rocmlint/results); a folder that git tracks files in, or "
        "that belongs to another user, is never used",
    )
    scan.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor keep per-file results: check every file again",
    )
    # What could not be analysed, and what was left out on purpose.
    scan.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when any file could not be analysed (unreadable, binary, not UTF-8, too large, a syntax "
        "error, not a regular file), even with --exit-zero",
    )
    scan.add_argument(
        "--show-skipped",
        action="store_true",
        help="also list what was left out on purpose, each with its reason: files ignored by git or .gitignore, "
        "excluded by a pattern, in environment or build folders, symbolic links not followed (text, json; SARIF "
        "as notifications)",
    )
    _add_workflow_options(scan)

    rules = commands.add_parser("rules", formatter_class=_HelpFormatter, allow_abbrev=False, help="list every check", description="List every check rocmlint has.")
    rules.add_argument("--format", choices=("text", "markdown", "json"), default="text")

    explain = commands.add_parser(
        "explain",
        formatter_class=_HelpFormatter,
        allow_abbrev=False,
        help="show a check's documentation and fix-it",
        description="Show a check's documentation and fix-it, or with `gates` what rocmlint leaves alone and why "
        "(gated code, and the project model of what the ROCm build compiles).",
    )
    explain.add_argument("check_id", metavar="ROCMnnn|gates")
    explain.add_argument("--format", choices=("text", "markdown"), default="text")

    _add_report_parser(commands)

    server = commands.add_parser(
        "server",
        formatter_class=_HelpFormatter,
        allow_abbrev=False,
        help="run the language server on standard input and output (needs rocmlint[server])",
        description="A Language Server Protocol server over stdio for every file rocmlint reads: diagnostics as you "
        "type, quick fixes, noqa actions and the fix-it as a hover. Editors start it; see the README for their settings.",
    )
    server.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor keep per-file results of saved files (kept where `scan` keeps them, see scan --cache-dir)",
    )
    clean = commands.add_parser(
        "clean",
        formatter_class=_HelpFormatter,
        allow_abbrev=False,
        help="remove the results kept for this project (or, with --all, for every project)",
        description="Remove what `rocmlint scan` keeps between scans for the project of the current folder: the folder "
        "a scan from here would use (--cache-dir, else $ROCMLINT_CACHE_DIR, else the project's folder in "
        "$XDG_CACHE_HOME/rocmlint/results or ~/.cache/rocmlint/results), with its pack of kept results, what older "
        "versions kept there, temporary files, its CACHEDIR.TAG and .gitignore. Only a folder rocmlint tagged is "
        "touched, and in it only files rocmlint writes. The next scan checks every file again.",
    )
    clean.add_argument("--cache-dir", metavar="DIR", help="clean this folder instead")
    clean.add_argument(
        "--all",
        action="store_true",
        help="remove the kept results of every project in the user's cache folder, and the parsed check catalogs kept "
        "beside them (not a folder named elsewhere by --cache-dir or $ROCMLINT_CACHE_DIR)",
    )
    commands.add_parser(
        "doctor",
        formatter_class=_HelpFormatter,
        allow_abbrev=False,
        help="report this machine's GPU stack and runtime hazards (needs rocmlint[runtime] for GPU details)",
        add_help=False,
    )
    parser.set_defaults(scan_parser=scan)
    return parser


def _settings(args):
    from rocmlint.config import parse_archs, parse_rocm_version
    from rocmlint.settings import CommandLine, Settings

    from rocmlint.config import parse_override

    config_files, overrides = [], []
    for value in args.config or ():
        if Path(value).is_file():
            config_files.append(value)
        elif "=" in value:
            overrides.append(parse_override(value))
        else:
            raise UsageError(f"--config {value}: no such file (and not a `key = value` either)")
    if len(config_files) > 1:
        raise UsageError(f"--config names {len(config_files)} files: give one (and any number of `key = value`)")
    config_file = config_files[0] if config_files else None
    if config_file and args.isolated:
        raise UsageError("--config and --isolated cannot be used together: --isolated ignores every configuration file")
    if args.max_file_size is not None and args.max_file_size < 0:
        raise UsageError("--max-file-size must be 0 or more")
    command_line = CommandLine(
        select=tuple(_ids(args.select)) if args.select is not None else None,
        extend_select=tuple(_ids(args.extend_select) or ()),
        ignore=tuple(_ids(args.ignore)) if args.ignore is not None else None,
        extend_ignore=tuple(_ids(args.extend_ignore) or ()),
        exclude=tuple(args.exclude),
        max_file_size=args.max_file_size,
        rocm_version=parse_rocm_version(args.rocm_version, "--rocm-version") if args.rocm_version is not None else None,
        archs=parse_archs(_ids(args.arch) or [""], "--arch") if args.arch is not None else None,
        config_file=Path(config_file) if config_file else None,
        isolated=args.isolated,
        preview=args.preview,
        per_file_ignores=_per_file_ignores(args.per_file_ignores, "--per-file-ignores") if args.per_file_ignores is not None else None,
        extend_per_file_ignores=_per_file_ignores(args.extend_per_file_ignores or [], "--extend-per-file-ignores"),
        overrides=tuple(overrides),
    )
    from rocmlint.engine import select_checks

    if command_line.select is not None and not command_line.select and not command_line.extend_select:
        raise UsageError("--select names no check: give check ids or prefixes (ALL for every check)")
    # Command-line ids are checked here, before any file is read.
    for ids in (command_line.select, command_line.extend_select, command_line.ignore, command_line.extend_ignore):
        if ids:
            select_checks(list(ids), [])
    for _, ids in (command_line.per_file_ignores or ()) + command_line.extend_per_file_ignores:
        select_checks(list(ids), [])
    settings = Settings(command_line)
    _say_preview_needed((command_line.select or ()) + command_line.extend_select, settings)
    return settings


def _per_file_ignores(values: list[str], option: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`PATTERN:IDS` (as ruff spells it: `tests/**:ROCM001,ROCM2`), the pattern relative to the
    current directory; a pattern that starts with `!` applies to every file it does not match."""
    pairs = []
    for value in values:
        pattern, colon, ids = value.rpartition(":")
        codes = tuple(_ids([ids]) or ())
        if not colon or not pattern.lstrip("!").strip() or not codes:
            raise UsageError(f"{option} {value!r}: give PATTERN:IDS, such as 'tests/**:ROCM001,ROCM2'")
        pairs.append((pattern, tuple(code.upper() for code in codes)))
    return tuple(pairs)


def _say_preview_needed(selected: tuple[str, ...], settings) -> None:
    """A check named by its id that will not run because it is in preview is said so, once."""
    from rocmlint.catalog.loader import check_by_id

    named = [c for c in (check_by_id(i.upper()) for i in selected) if c is not None and c.preview]
    if named and not settings.config_for(Path.cwd() / "-").preview:
        for check in named:
            print(
                f"rocmlint: {check.id} is in preview and does not run (measured right on {check.measured_text()}): "
                "add --preview, or `preview = true` in the configuration",
                file=sys.stderr,
            )


def _scan(args) -> int:
    from rocmlint.report import render
    from rocmlint.settings import scan_paths

    if args.fix_only and not args.diff:
        args.fix = True  # as in ruff: --fix-only implies --fix, and --diff shows what it would do
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UsageError("--unsafe-fixes needs --fix, --fix-only or --diff")
    if args.exit_non_zero_on_fix and not args.fix:
        raise UsageError("--exit-non-zero-on-fix needs --fix or --fix-only")
    if args.format in ("concise", "full"):
        args.show_fix = args.show_fix or args.format == "full"
        args.format = "text"
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    _check_workflow_options(args)
    settings = _settings(args)
    if args.paths == ["-"]:
        return _scan_stdin(args, settings)
    paths = [Path(p) for p in (args.paths or ["."])]
    for path in paths:
        _check_path(path)
    if args.show_settings:
        return _show_settings(settings, paths[0])
    if args.show_files:
        return _show_files(settings, paths, args.force_exclude)
    if args.output:
        _check_output(args.output)

    cache_dir = None
    if not args.no_cache:
        from rocmlint.files.result_cache import default_directory, refusal

        chosen = args.cache_dir or default_directory(settings.config_for(Path.cwd()).root)
        refused = refusal(str(chosen)) if chosen is not None else None
        if refused is not None:
            from rocmlint.report.text import shown

            print(f"rocmlint: results are not kept in {shown(str(chosen))}: {refused}", file=sys.stderr)
        elif chosen is not None:
            cache_dir = str(chosen)

    import time

    started = time.monotonic()

    def run():
        with _Progress(args) as progress:
            return scan_paths(
                paths, settings, jobs=args.jobs, use_project=not args.no_project, force_exclude=args.force_exclude,
                progress=progress, cache_dir=cache_dir, honour_noqa=not args.ignore_noqa,
            )

    result, checks = run()
    if args.add_noqa:
        return _add_noqa(result)
    if args.diff:
        return _show_diff(result, args.unsafe_fixes)
    applied = 0
    if args.fix:
        from rocmlint.fixes.files import fix_files

        applied, fix_problems = fix_files(result.findings, args.unsafe_fixes)
        if applied:
            result, checks = run()
        result.problems.extend(fix_problems)
        print(f"Fixed {applied} finding{'s' if applied != 1 else ''}.", file=sys.stderr)
    fixed_exit = EXIT_FINDINGS if args.exit_non_zero_on_fix and applied else EXIT_CLEAN
    if args.fix_only:
        # As in ruff: what remains is not reported; only what could not be done is said.
        if result.problems and not args.quiet:
            _print_problems(result.problems)
        if any(problem.internal for problem in result.problems):
            return EXIT_ERROR
        return fixed_exit
    if args.baseline:
        if args.write_baseline:
            return _write_baseline(args, result, paths, checks)
        result = _without_baselined(args, result, paths, checks)
    rocm_version = _rocm_version(settings, paths[0])
    report = render(
        args.format, result, checks, show_fix=args.show_fix, show_gated=args.show_gated, rocm_version=rocm_version,
        paths=paths, sarif_category=args.sarif_category, statistics=args.statistics, show_skipped=args.show_skipped,
        color=_color(args), elapsed=time.monotonic() - started,
    )
    if args.output:
        _write_report(args.output, report)
    else:
        _write_stdout(report)
    if result.problems and not args.quiet and args.format != "github":
        _print_problems(result.problems)
    if any(problem.internal for problem in result.problems):
        print("rocmlint: internal error: some files were not fully checked (see above); please report it", file=sys.stderr)
        return EXIT_ERROR
    if args.strict and result.problems:
        return EXIT_FINDINGS
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return fixed_exit


def _color(args) -> bool:
    """Whether the text formats are coloured: --color, else NO_COLOR and FORCE_COLOR
    (no-color.org, force-color.org), else whether standard output is a terminal."""
    import os

    if args.color != "auto":
        return args.color == "always"
    if args.output or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _show_settings(settings, path: Path) -> int:
    """--show-settings: the configuration a path is checked with, as TOML keys."""
    from rocmlint.settings import checks_for

    config = settings.config_for(path)
    target = config.target
    lines = [
        f"# Resolved settings for: {path.as_posix()}",
        f"# Settings path: {config.path.as_posix() if config.path else 'none (defaults)'}",
        f"# Patterns are relative to: {config.root.as_posix()}",
        f"select = {_toml(list(config.select))}" if config.select is not None else "# select: not set (the checks on by default)",
        f"extend-select = {_toml(list(config.extend_select))}",
        f"ignore = {_toml(list(config.ignore))}",
        "per-file-ignores = {" + ", ".join(f"{_toml(p)} = {_toml(list(ids))}" for p, ids in config.per_file_ignores) + "}",
        f"exclude = {_toml(list(config.exclude))}",
        f"max-file-size = {config.max_file_size}",
        f"cuda-only = {_toml(list(config.cuda_only))}",
        f"rocm-sources = {_toml(list(config.rocm_sources))}",
        f"rocm-version = {_toml('.'.join(map(str, target.rocm_version)))}" if target.rocm_version else "# rocm-version: not set (any current release)",
        f"arch = {_toml(list(target.archs))}",
        f"preview = {'true' if config.preview else 'false'}",
    ]
    command_line = settings.command_line
    given = (command_line.per_file_ignores or ()) + command_line.extend_per_file_ignores
    if given:
        shown = ", ".join(pattern + ":" + ",".join(ids) for pattern, ids in given)
        lines.append(f"# --per-file-ignores (relative to the current directory): {shown}")
    lines.append(f"# checks that run: {' '.join(c.id for c in checks_for(config))}")
    _write_stdout("\n".join(lines) + "\n")
    return EXIT_CLEAN


def _toml(value) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string or list of strings is TOML too


def _show_files(settings, paths, force_exclude: bool) -> int:
    """--show-files: every file a scan of `paths` would check, one a line, sorted."""
    from rocmlint.report.text import shown_path
    from rocmlint.settings import files_to_scan

    files, problems = files_to_scan(paths, settings, force_exclude)
    _write_stdout("".join(f"{shown_path(path)}\n" for path in sorted(files)))
    if problems:
        _print_problems(problems)
    return EXIT_CLEAN


def _check_path(path: Path) -> None:
    """A path named on the command line must lead somewhere."""
    import errno
    import os

    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{path}: symbolic link loop") from None
        if exc.errno == errno.ENAMETOOLONG:
            raise UsageError(f"{path}: path too long for the file system") from None
        if os.path.islink(path):
            raise UsageError(f"{path}: broken symbolic link (its target does not exist)") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise UsageError(f"{path}: no such file or directory") from None
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{path!r}: {exc}") from None


def _check_output(output: str) -> None:
    """Refuse an -o that cannot be written before the scan, not after it."""
    import os

    target = Path(output)
    if target.is_dir():
        raise UsageError(f"-o {output}: is a directory")
    parent = target.parent
    if not parent.is_dir():
        raise UsageError(f"-o {output}: no such directory: {parent}")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"-o {output}: cannot write in {parent}")


def _write_report(output: str, report: str) -> None:
    try:
        Path(output).write_bytes(report.encode("utf-8", errors="backslashreplace"))
    except OSError as exc:
        raise UsageError(f"-o {output}: cannot write: {exc.strerror or exc}") from None


def _write_stdout(report: str) -> None:
    # Reports are UTF-8 whatever the locale; a character the reporters did not escape
    # (a file name that is not UTF-8) is written escaped, never as an invalid byte.
    data = report.encode("utf-8", errors="backslashreplace")
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()


# --- options for workflows users already have (ruff's habits, CI services, adoption) ----------


def _add_workflow_options(scan) -> None:
    group = scan.add_argument_group("selection, input and adoption")
    group.add_argument("--extend-select", action="append", metavar="IDS", help="comma-separated check ids or prefixes to add to the selection")
    group.add_argument("--extend-ignore", action="append", metavar="IDS", help="comma-separated check ids or prefixes to add to `ignore`")
    preview = group.add_mutually_exclusive_group()
    preview.add_argument(
        "--preview",
        action="store_true",
        default=None,
        help="also run the checks in preview: measured right less than 9 times in 10 on real projects (`rocmlint rules`)",
    )
    preview.add_argument("--no-preview", dest="preview", action="store_false", help="run no check in preview, whatever the configuration says")
    group.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclude patterns to files named on the command line too (for pre-commit, which names every file)",
    )
    group.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="with PATH `-`: the name of the text read from standard input (its language, configuration and how reports name it)",
    )
    group.add_argument("--statistics", action="store_true", help="count findings per check instead of listing them (text or json)")
    group.add_argument(
        "--diff", action="store_true", help="print the fixes --fix would apply as a unified diff, change no file (exit 1 if there are any)"
    )
    group.add_argument("--add-noqa", action="store_true", help="add a noqa comment to every line with a finding, where that is safe")
    group.add_argument(
        "--baseline",
        metavar="FILE",
        help="report only findings that are not recorded in FILE (recorded by path, check and line contents, not line numbers)",
    )
    group.add_argument("--write-baseline", action="store_true", help="with --baseline FILE: record every current finding in FILE")
    group.add_argument(
        "--sarif-category", metavar="NAME", help="SARIF: the category that tells this analysis apart from others of the same commit"
    )
    habits = scan.add_argument_group("as in ruff")
    habits.add_argument("--fix-only", action="store_true", help="apply safe fixes (--unsafe-fixes: those too) and report nothing else; exit 0")
    habits.add_argument(
        "--exit-non-zero-on-fix", action="store_true", help="exit 1 when --fix or --fix-only changed a file, even if no finding remains"
    )
    habits.add_argument("--ignore-noqa", action="store_true", help="report what noqa comments (line and file level) suppress")
    habits.add_argument(
        "--per-file-ignores",
        action="append",
        metavar="PATTERN:IDS",
        help="checks to leave out in matching files, in place of the configured per-file-ignores; gitignore-style pattern "
        "relative to the current directory; `!PATTERN`: every file it does not match (repeatable)",
    )
    habits.add_argument(
        "--extend-per-file-ignores", action="append", metavar="PATTERN:IDS", help="as --per-file-ignores, added to the configured ones"
    )
    habits.add_argument("--show-settings", action="store_true", help="print the configuration the first path is checked with, and exit")
    habits.add_argument("--show-files", action="store_true", help="print the files a scan would check, and exit")
    habits.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text formats: auto (default) on a terminal unless NO_COLOR is set, or where FORCE_COLOR is",
    )


def _check_workflow_options(args) -> None:
    if args.stdin_filename is not None and args.paths != ["-"]:
        raise UsageError("--stdin-filename needs the path `-` (read standard input)")
    if "-" in args.paths and args.paths != ["-"]:
        raise UsageError("`-` (standard input) cannot be scanned together with other paths")
    if args.write_baseline and not args.baseline:
        raise UsageError("--write-baseline needs --baseline FILE")
    if args.statistics and args.format not in ("text", "json"):
        raise UsageError("--statistics prints text or json")
    exclusive = [name for name, on in (("--fix", args.fix), ("--diff", args.diff), ("--add-noqa", args.add_noqa),
                                       ("--write-baseline", args.write_baseline)) if on]
    if len(exclusive) > 1:
        raise UsageError(f"{' and '.join(exclusive)} cannot be used together")
    if args.sarif_category is not None and args.format != "sarif":
        raise UsageError("--sarif-category needs --format sarif")


def _rocm_version(settings, path):
    config = settings.config_for(path)
    return config.target.rocm_version if config.target is not None else None


class _Progress:
    """`checked N/M files` on standard error while a scan runs, when it is a terminal (never in
    a pipe or a CI log); the line is erased at the end."""

    def __init__(self, args):
        self.on = not args.quiet and sys.stderr.isatty()
        self.shown = False
        self.last = 0.0

    def __enter__(self):
        return self.update if self.on else None

    def update(self, done: int, total: int) -> None:
        import time

        now = time.monotonic()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        sys.stderr.write(f"\rrocmlint: checked {done}/{total} files")
        sys.stderr.flush()
        self.shown = True

    def __exit__(self, *exc) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _scan_stdin(args, settings) -> int:
    from rocmlint.fixes.files import rewritten, unified_diff
    from rocmlint.report import render
    from rocmlint.settings import checks_for
    from rocmlint.stdin import scan_text

    if args.add_noqa or args.baseline:
        raise UsageError("--add-noqa and --baseline work on files, not on standard input")
    data = sys.stdin.buffer.read()
    result = scan_text(
        data, args.stdin_filename, settings, use_project=not args.no_project, force_exclude=args.force_exclude,
        honour_noqa=not args.ignore_noqa,
    )
    name = args.stdin_filename or "-"
    config = settings.config_for(args.stdin_filename or Path.cwd() / "-")
    if args.fix or args.diff:
        fixed, applied = rewritten(data, result.findings, args.unsafe_fixes) if result.findings else (data, 0)
        if args.diff:
            sys.stdout.write(unified_diff(name, data, fixed) if applied else "")
            print(f"Would fix {applied} finding{'s' if applied != 1 else ''}.", file=sys.stderr)
            return EXIT_FINDINGS if applied else EXIT_CLEAN
        # As ruff does: the fixed text on standard output, what remains on standard error.
        sys.stdout.buffer.write(fixed)
        sys.stdout.flush()
        if args.fix_only:  # nothing else is reported
            return EXIT_FINDINGS if args.exit_non_zero_on_fix and applied else EXIT_CLEAN
        if applied:
            result = scan_text(fixed, args.stdin_filename, settings, use_project=not args.no_project)
        sys.stderr.write(render("text", result, checks_for(config)))
        if applied and args.exit_non_zero_on_fix:
            return EXIT_FINDINGS
    else:
        report = render(
            args.format, result, list(checks_for(config)), show_fix=args.show_fix, show_gated=args.show_gated,
            rocm_version=config.target.rocm_version, paths=[Path(args.stdin_filename or ".")],
            sarif_category=args.sarif_category, statistics=args.statistics,
        )
        if args.output:
            Path(args.output).write_text(report, encoding="utf-8")
        else:
            sys.stdout.write(report)
    if result.problems and not args.quiet and args.format != "github":
        _print_problems(result.problems)
    return EXIT_FINDINGS if result.findings and not args.exit_zero else EXIT_CLEAN


def _print_problems(problems) -> None:
    """`path:line: skipped: reason` on standard error for each file that could not be analysed."""
    from rocmlint.report.text import problem_location, shown

    for problem in problems:
        print(f"{problem_location(problem)}: skipped: {shown(problem.reason)}", file=sys.stderr)


def _show_diff(result, unsafe: bool) -> int:
    from rocmlint.fixes.files import diff_of_fixes

    diff, applied = diff_of_fixes(result.findings, unsafe)
    sys.stdout.write(diff)
    print(f"Would fix {applied} finding{'s' if applied != 1 else ''}.", file=sys.stderr)
    return EXIT_FINDINGS if applied else EXIT_CLEAN


def _add_noqa(result) -> int:
    from rocmlint.noqa.add import add_noqa

    from rocmlint.report.text import shown, shown_path

    report = add_noqa(result.findings)
    for path, line, why in report.refused:
        print(f"{shown_path(path)}:{line}: no noqa comment added: {shown(why)}", file=sys.stderr)
    print(f"Added {report.added} noqa comment{'s' if report.added != 1 else ''} in {report.files} file{'s' if report.files != 1 else ''}.",
          file=sys.stderr)
    return EXIT_FINDINGS if report.refused else EXIT_CLEAN


def _write_baseline(args, result, paths, checks) -> int:
    """Record the current findings of the scanned paths; what the baseline holds for other
    files (or for checks that did not run) stays in it."""
    from collections import Counter

    from rocmlint.report.baseline import entries_outside, read_baseline, stale_entries, write_merged_baseline

    path = Path(args.baseline)
    previous = read_baseline(path) if path.exists() else Counter()
    ran = {c.id for c in checks}
    dropped = stale_entries(result.findings, previous, path, paths, ran) if previous else 0
    count, kept = write_merged_baseline(path, result.findings, entries_outside(previous, path, paths, ran))
    said = f"Wrote {count} finding{'s' if count != 1 else ''} to {args.baseline}"
    if kept:
        said += f" ({kept} kept from files or checks this scan did not cover)"
    if dropped:
        said += f"; dropped {dropped} no longer found"
    print(said + ".", file=sys.stderr)
    return EXIT_CLEAN


def _without_baselined(args, result, paths, checks):
    from rocmlint.report.baseline import filter_baselined, read_baseline, stale_entries

    path = Path(args.baseline)
    baseline = read_baseline(path)
    stale = stale_entries(result.findings, baseline, path, paths, {c.id for c in checks})
    kept, hidden = filter_baselined(result.findings, baseline, path)
    result.findings = kept
    result.baselined = hidden
    if stale and not args.quiet:
        print(
            f"rocmlint: {stale} finding{'s' if stale != 1 else ''} in {args.baseline} no longer found (fixed, or the line "
            "changed): --write-baseline drops them",
            file=sys.stderr,
        )
    return result


# --- the porting report ----------------------------------------------------------------------


def _add_report_parser(commands) -> None:
    report = commands.add_parser(
        "report",
        formatter_class=_HelpFormatter,
        allow_abbrev=False,
        help="write a porting report: one HTML page of where the work is (and a Markdown summary)",
        description="Scan as `rocmlint scan` does and write one self-contained HTML page: findings by folder, owner "
        "(CODEOWNERS), check family, severity and effort, gated hits with their reasons, the trend against a previous "
        "json report, and each finding's fix-it. Every `rocmlint scan` option that chooses what is checked applies "
        "(--select, --ignore, --exclude, --config, --preview, --rocm-version, --arch, --no-project, --no-cache, ...).",
        epilog="Example: rocmlint report src --output report.html --previous last.json --summary \"$GITHUB_STEP_SUMMARY\"",
    )
    _report_options(report)


def _report_options(parser, with_paths: bool = True) -> None:
    if with_paths:
        parser.add_argument("paths", nargs="*", metavar="PATH", help="files and folders to scan (default: .)")
    parser.add_argument("-o", "--output", metavar="FILE", help="the HTML page to write (default: rocmlint-report.html)")
    parser.add_argument(
        "--previous", metavar="JSON", help="a report written earlier by `rocmlint scan --format json`: the page shows the trend"
    )
    parser.add_argument("--summary", metavar="FILE", help="also append a Markdown summary to FILE (such as $GITHUB_STEP_SUMMARY)")
    parser.add_argument("--title", metavar="TEXT", help="the page's title (default: ROCm porting report: FOLDER)")


# Scan options that make no sense for a report: it writes its own format and changes no file.
_NOT_FOR_REPORT = ("format", "fix", "unsafe_fixes", "diff", "add_noqa", "write_baseline", "fix_only", "exit_non_zero_on_fix",
                   "statistics", "show_settings", "show_files", "sarif_category", "stdin_filename", "show_fix")


def _report_arguments(parser, argv: list[str]):
    """`report`'s own options, then every scan option (the same parser `scan` uses) for the rest."""
    own = argparse.ArgumentParser(formatter_class=_HelpFormatter, prog="rocmlint report", allow_abbrev=False, add_help=False)
    _report_options(own, with_paths=False)
    own.add_argument("-h", "--help", action="store_true")
    # Paths are left to the scan parser, where they may stand before, after or between options.
    own_args, rest = own.parse_known_args(argv)
    if own_args.help:
        parser.parse_args(["report", "--help"])  # prints the help and exits
    scan_parser = parser.get_default("scan_parser")
    defaults = vars(scan_parser.parse_args([]))
    args = scan_parser.parse_intermixed_args(rest)
    given = [name for name in _NOT_FOR_REPORT if getattr(args, name) != defaults[name]]
    if given:
        raise SystemExit(_usage_error(f"rocmlint report: --{given[0].replace('_', '-')} is a scan option a report does not take"))
    args.command = "report"
    args.html_output = own_args.output or "rocmlint-report.html"
    args.previous, args.summary, args.title = own_args.previous, own_args.summary, own_args.title
    return args


def _usage_error(message: str) -> int:
    print(f"rocmlint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _report(args) -> int:
    """A thin face over the scan: the same settings and engine as `rocmlint scan`; only the
    rendering differs (rocmlint.report.porting counts, html_report and markdown_summary write)."""
    from rocmlint.report.html_report import render_html
    from rocmlint.report.markdown_summary import render_summary
    from rocmlint.report.porting import PreviousReportError, build_figures, read_previous
    from rocmlint.settings import scan_paths

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    settings = _settings(args)
    paths = [Path(p) for p in (args.paths or ["."])]
    if "-" in args.paths:
        raise UsageError("a report is made of files and folders, not of standard input")
    for path in paths:
        _check_path(path)
    _check_output(args.html_output)
    if args.summary:
        _check_output(args.summary)
    try:
        previous = read_previous(Path(args.previous)) if args.previous else None
    except PreviousReportError as exc:
        raise UsageError(str(exc)) from None
    cache_dir = None
    if not args.no_cache:
        from rocmlint.files.result_cache import default_directory, refusal

        chosen = args.cache_dir or default_directory(settings.config_for(Path.cwd()).root)
        if chosen is not None and refusal(str(chosen)) is None:
            cache_dir = str(chosen)
    with _Progress(args) as progress:
        result, checks = scan_paths(
            paths, settings, jobs=args.jobs, use_project=not args.no_project, force_exclude=args.force_exclude,
            progress=progress, cache_dir=cache_dir, honour_noqa=not args.ignore_noqa,
        )
    if args.baseline:
        result = _without_baselined(args, result, paths, checks)
    figures = build_figures(result, paths, previous=previous, title=args.title)
    _write_report(args.html_output, render_html(figures, rocm_version=_rocm_version(settings, paths[0])))
    if args.summary:
        try:
            with open(args.summary, "a", encoding="utf-8") as summary:
                summary.write(render_summary(figures))
        except OSError as exc:
            raise UsageError(f"--summary {args.summary}: cannot write: {exc.strerror or exc}") from None
    if result.problems and not args.quiet:
        _print_problems(result.problems)
    print(f"rocmlint: wrote {args.html_output}: {len(result.findings)} finding{'s' if len(result.findings) != 1 else ''} "
          f"in {result.files_scanned} files", file=sys.stderr)
    if any(problem.internal for problem in result.problems):
        return EXIT_ERROR
    if args.strict and result.problems:
        return EXIT_FINDINGS
    return EXIT_FINDINGS if result.findings and not args.exit_zero else EXIT_CLEAN


def _rules(args) -> int:
    from rocmlint.catalog.docs import preview_note, render_check_table
    from rocmlint.catalog.loader import load_catalog

    catalog = list(load_catalog())
    if args.format == "markdown":
        sys.stdout.write(render_check_table(catalog))
    elif args.format == "json":
        rows = [
            {
                "id": c.id,
                "name": c.name,
                "title": c.title,
                "languages": list(c.languages),
                "severity": c.severity,
                "enabled_by_default": c.enabled_by_default,
                "preview": sorted(c.preview_kinds),
                "measured": {kind: {"true": true, "decided": decided} for kind, true, decided in c.measured} or None,
                "fix": c.fix.rewrite.safety if c.fix and c.fix.rewrite else None,
                "runtime": c.fix.runtime if c.fix else None,
            }
            for c in catalog
        ]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        for c in catalog:
            fix = f"fix:{c.fix.rewrite.safety}" if c.fix and c.fix.rewrite else "snippet"
            note = " (off by default)" if not c.enabled_by_default else preview_note(c)
            off = f" {note}" if note else ""
            print(f"{c.id}  {c.severity:<7}  {','.join(c.languages):<10}  {fix:<11}  {c.title}{off}")
    return EXIT_CLEAN


def _explain(args) -> int:
    from rocmlint.catalog.loader import check_by_id
    from rocmlint.catalog.docs import render_markdown, render_text, render_topic_text

    if args.check_id.lower() == "gates":
        from importlib import resources

        text = (resources.files("rocmlint") / "topics" / "gates.md").read_text(encoding="utf-8")
        sys.stdout.write(text if args.format == "markdown" else render_topic_text(text))
        return EXIT_CLEAN
    check = check_by_id(args.check_id)
    if check is None:
        raise UsageError(f"unknown check {args.check_id!r} (see `rocmlint rules`; `rocmlint explain gates` for gates)")
    sys.stdout.write(render_markdown(check) if args.format == "markdown" else render_text(check))
    return EXIT_CLEAN


def _clean(args) -> int:
    from rocmlint.files import result_cache
    from rocmlint.report.text import shown

    if args.all:
        if args.cache_dir:
            raise UsageError("--all cleans the user's cache folder: it takes no --cache-dir")
        user = result_cache.user_cache_folder()
        where = os.path.join(user, "rocmlint") if user is not None else None
        removed = result_cache.clean_all()
    else:
        from rocmlint.settings import Settings

        chosen = args.cache_dir or result_cache.default_directory(Settings().config_for(Path.cwd()).root)
        if chosen is None:
            raise UsageError("no cache folder: no home folder, and no --cache-dir or $ROCMLINT_CACHE_DIR")
        where = str(chosen)
        try:
            removed = result_cache.clean(where)
        except ValueError as exc:
            raise UsageError(f"not cleaning {shown(where)}: {exc}") from None
    if not removed:
        print(f"Nothing to remove: no results kept in {shown(where) if where else 'the user cache folder'}.")
        return EXIT_CLEAN
    size = sum(bytes_ for _, bytes_ in removed)
    print(f"Removed {len(removed)} file{'s' if len(removed) != 1 else ''} ({_size(size)}) from {shown(where)}.")
    return EXIT_CLEAN


def _size(count: int) -> str:
    for unit in ("bytes", "KiB", "MiB"):
        if count < 1024 or unit == "MiB":
            return f"{count} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} MiB"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["doctor"]:
        from rocmlint.runtime.doctor import main as doctor_main

        return doctor_main(argv[1:])
    parser = _parser()
    if argv[:1] == ["report"]:
        args = _report_arguments(parser, argv[1:])
    elif argv[:1] in (["scan"], ["check"]):
        # Paths before, after or between the options, as ruff takes them: `scan src --no-cache tests`.
        args = parser.get_default("scan_parser").parse_intermixed_args(argv[1:])
        args.command = "scan"
    else:
        args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    from rocmlint.catalog.loader import CheckFileError
    from rocmlint.config import ConfigError
    from rocmlint.engine import SelectionError

    try:
        if args.command == "report":
            return _report(args)
        if args.command in ("scan", "check"):
            return _scan(args)
        if args.command == "rules":
            return _rules(args)
        if args.command == "explain":
            return _explain(args)
        if args.command == "clean":
            return _clean(args)
        if args.command == "server":
            from rocmlint.server import main as server_main

            return server_main(use_cache=not args.no_cache)
    except (UsageError, ConfigError, SelectionError, CheckFileError) as exc:
        print(f"rocmlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # the last guard: a bug must not look like "no findings"
        # A baseline that cannot be read is a usage error; its module is imported only by
        # scans that read or write one, so a scan that has not imported it raised no such error.
        baseline = sys.modules.get("rocmlint.report.baseline")
        if baseline is not None and isinstance(exc, baseline.BaselineError):
            print(f"rocmlint: error: {exc}", file=sys.stderr)
            return EXIT_ERROR
        import traceback

        traceback.print_exc()
        print(f"rocmlint: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
