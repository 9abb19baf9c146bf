"""The `rocmlint` command: scan, rules, explain, doctor.

Exit codes: 0 nothing found, 1 findings reported, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import json
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rocmlint",
        description="Find the code that breaks or slows down when a CUDA/NVIDIA project moves to AMD GPUs (ROCm/HIP).",
        epilog="Exit codes: 0 no findings, 1 findings, 2 usage or internal error. Docs per check: rocmlint explain ROCM001",
    )
    parser.add_argument("--version", action="version", version=f"rocmlint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    scan = commands.add_parser(
        "scan",
        help="scan files and directories",
        description="Scan Python, CUDA/HIP C++ and build files for ROCm portability pitfalls.",
        epilog="Configuration: [tool.rocmlint] in the nearest pyproject.toml above the first PATH "
        "(keys: select, ignore, exclude, max-file-size, cuda-only, rocm-sources, rocm-version, arch). Command-line "
        "--select/--ignore/--rocm-version/--arch replace the configured values; --exclude adds to them. Before reporting C/C++ "
        "hits, rocmlint reads the project's CMake files, setup.py and Makefiles to learn which files the "
        "ROCm build compiles (--no-project turns this off; --show-gated lists what it gated).",
    )
    scan.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .)")
    scan.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text", help="output format (default: text)")
    scan.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of standard output")
    scan.add_argument("--select", action="append", metavar="IDS", help="comma-separated check ids or prefixes to run (e.g. ROCM001,ROCM2)")
    scan.add_argument("--ignore", action="append", metavar="IDS", help="comma-separated check ids or prefixes to leave out")
    scan.add_argument("--exclude", action="append", default=[], metavar="PATTERN", help="gitignore-style pattern of paths to skip (repeatable)")
    scan.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings are reported")
    scan.add_argument("--show-fix", action="store_true", help="text format: print each finding's fix-it snippet")
    scan.add_argument("--fix", action="store_true", help="apply safe automatic fixes in place")
    scan.add_argument("--unsafe-fixes", action="store_true", help="with --fix, also apply unsafe fixes")
    scan.add_argument("--config", metavar="FILE", help="read [tool.rocmlint] from this pyproject.toml")
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

    rules = commands.add_parser("rules", help="list every check", description="List every check rocmlint has.")
    rules.add_argument("--format", choices=("text", "markdown", "json"), default="text")

    explain = commands.add_parser(
        "explain",
        help="show a check's documentation and fix-it",
        description="Show a check's documentation and fix-it, or with `gates` what rocmlint leaves alone and why "
        "(gated code, and the project model of what the ROCm build compiles).",
    )
    explain.add_argument("check_id", metavar="ROCMnnn|gates")
    explain.add_argument("--format", choices=("text", "markdown"), default="text")

    commands.add_parser(
        "doctor",
        help="report this machine's GPU stack and runtime hazards (needs rocmlint[runtime] for GPU details)",
        add_help=False,
    )
    return parser


def _load_config(args):
    from rocmlint.config import Config, find_config, load_config_file

    if args.isolated:
        config = Config()
    elif args.config:
        path = Path(args.config)
        if not path.is_file():
            raise UsageError(f"--config {args.config}: no such file")
        config = load_config_file(path)
    else:
        first = Path(args.paths[0]) if args.paths else Path(".")
        config = find_config(first if first.is_dir() else first.parent)
    if args.max_file_size is not None:
        if args.max_file_size < 0:
            raise UsageError("--max-file-size must be 0 or more")
        from dataclasses import replace

        config = replace(config, max_file_size=args.max_file_size)
    if args.rocm_version is not None or args.arch is not None:
        from dataclasses import replace

        from rocmlint.config import GpuTarget, parse_archs, parse_rocm_version

        target = config.target
        if args.rocm_version is not None:
            target = replace(target, rocm_version=parse_rocm_version(args.rocm_version, "--rocm-version"))
        if args.arch is not None:
            target = replace(target, archs=parse_archs(_ids(args.arch) or [""], "--arch"))
        config = replace(config, target=GpuTarget(target.rocm_version, target.archs))
    return config


def _scan(args) -> int:
    from rocmlint.engine import ScanRequest, scan, select_checks
    from rocmlint.report import render

    if args.unsafe_fixes and not args.fix:
        raise UsageError("--unsafe-fixes needs --fix")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    paths = [Path(p) for p in (args.paths or ["."])]
    for path in paths:
        _check_path(path)
    if args.output:
        _check_output(args.output)
    config = _load_config(args)
    select = _ids(args.select) if args.select is not None else (list(config.select) if config.select is not None else None)
    if select is not None and not select:
        where = "--select" if args.select is not None else f"{config.path} [tool.rocmlint] select"
        raise UsageError(f"{where} names no check: give check ids or prefixes (ALL for every check)")
    ignore = _ids(args.ignore) if args.ignore is not None else list(config.ignore)
    checks = select_checks(select, ignore)
    request = ScanRequest(paths, checks, config, tuple(args.exclude), args.jobs, use_project=not args.no_project)
    result = scan(request)
    if args.fix:
        from rocmlint.fixes import fix_files

        applied, fix_problems = fix_files(result.findings, args.unsafe_fixes)
        if applied:
            result = scan(request)
        result.problems.extend(fix_problems)
        print(f"Fixed {applied} finding{'s' if applied != 1 else ''}.", file=sys.stderr)
    rocm_version = config.target.rocm_version if config.target is not None else None
    report = render(
        args.format, result, checks, show_fix=args.show_fix, show_gated=args.show_gated, rocm_version=rocm_version,
        show_skipped=args.show_skipped,
    )
    if args.output:
        _write_report(args.output, report)
    else:
        _write_stdout(report)
    if result.problems and not args.quiet and args.format != "github":
        from rocmlint.report.text import shown

        for problem in result.problems:
            where = f"{shown(problem.path)}:{problem.line}" if problem.line else shown(problem.path)
            print(f"{where}: skipped: {shown(problem.reason)}", file=sys.stderr)
    if any(problem.internal for problem in result.problems):
        print("rocmlint: internal error: some files were not fully checked (see above); please report it", file=sys.stderr)
        return EXIT_ERROR
    if args.strict and result.problems:
        return EXIT_FINDINGS
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
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


def _rules(args) -> int:
    from rocmlint.checks_loader import load_catalog
    from rocmlint.docs import render_check_table

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
                "fix": c.fix.rewrite.safety if c.fix and c.fix.rewrite else None,
                "runtime": c.fix.runtime if c.fix else None,
            }
            for c in catalog
        ]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        for c in catalog:
            fix = f"fix:{c.fix.rewrite.safety}" if c.fix and c.fix.rewrite else "snippet"
            off = "  (off by default)" if not c.enabled_by_default else ""
            print(f"{c.id}  {c.severity:<7}  {','.join(c.languages):<10}  {fix:<11}  {c.title}{off}")
    return EXIT_CLEAN


def _explain(args) -> int:
    from rocmlint.checks_loader import check_by_id
    from rocmlint.docs import render_markdown, render_text, render_topic_text

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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["doctor"]:
        from rocmlint.runtime.doctor import main as doctor_main

        return doctor_main(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    from rocmlint.checks_loader import CheckFileError
    from rocmlint.config import ConfigError
    from rocmlint.engine import SelectionError

    try:
        if args.command == "scan":
            return _scan(args)
        if args.command == "rules":
            return _rules(args)
        if args.command == "explain":
            return _explain(args)
    except (UsageError, ConfigError, SelectionError, CheckFileError) as exc:
        print(f"rocmlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # the last guard: a bug must not look like "no findings"
        import traceback

        traceback.print_exc()
        print(f"rocmlint: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
