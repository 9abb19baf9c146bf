"""The flake8 face: hands flake8's own tree to the engine.

Registered as the flake8 extension `ROC` (flake8 5+ accepts at most three letters in an entry
name); the codes it reports are ROCMnnn, so `flake8 --select ROCM` picks them. Each file is
checked with its nearest rocmlint configuration (rocmlint.config), as the scanner does, unless
flake8 runs with --isolated.

The plugin never raises: flake8 runs every plugin for every file, so an exception here would
end `flake8 --select E501` too, and an editor would silently show nothing. A configuration
that cannot be read, or a bug, becomes one ROCM000 diagnostic on line 1 that says what is wrong.

Columns are code points, as pycodestyle's are and as `--show-source` and editors (through
python-lsp-server) read them; `ast` columns are UTF-8 bytes, which put a finding after
non-ASCII text too far to the right.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from rocmlint import __version__

ERROR_CODE = "ROCM000"


@lru_cache(maxsize=64)
def _python_checks(config, extra_ignore: tuple[str, ...]):
    from rocmlint.records import replace

    from rocmlint.settings import checks_for

    if extra_ignore:
        config = replace(config, ignore=config.ignore + extra_ignore)
    checks = [c for c in checks_for(config) if "python" in c.languages]
    if not config.exclude:
        return checks, None  # nothing to exclude: the file walk's module need not be imported
    from rocmlint.files.discovery import Excludes

    return checks, Excludes(config.exclude, config.root)


def _flake8_command_is_isolated() -> bool:
    """Whether the flake8 command line says --isolated. flake8 reads that option before its
    others and leaves it out of the options plugins get (flake8 5-7), so read the command line
    with flake8's own first-stage parser; in worker processes sys.argv is the parent's. Only when
    this process is the flake8 command: a program that calls flake8's API has other arguments."""
    import os
    import sys

    command = sys.argv[0] if sys.argv else ""
    name, folder = os.path.basename(command), os.path.basename(os.path.dirname(command))
    if not (name in ("flake8", "flake8.exe") or (name == "__main__.py" and folder == "flake8")):
        return False
    try:
        from flake8.main.options import stage1_arg_parser

        known, _ = stage1_arg_parser().parse_known_args(sys.argv[1:])
    except (ImportError, SystemExit):
        return False
    return bool(getattr(known, "isolated", False))


class Flake8Checker:
    name = "rocmlint"
    version = __version__
    # Set from flake8's options (parse_options): --isolated and rocm-ignore.
    isolated = False
    rocm_ignore: tuple[str, ...] = ()

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]):
        self.tree = tree
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, parser) -> None:
        parser.add_option(
            "--rocm-ignore",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="rocmlint checks to leave out (ids or prefixes, e.g. ROCM001,ROCM1). Use this in a flake8 "
            "config file instead of `extend-ignore = ROCM001`, which flake8 rejects there.",
        )

    @classmethod
    def parse_options(cls, options) -> None:
        cls.isolated = bool(getattr(options, "isolated", False)) or _flake8_command_is_isolated()
        value = getattr(options, "rocm_ignore", "") or ()
        if isinstance(value, str):
            value = value.split(",")
        cls.rocm_ignore = tuple(code.strip().upper() for code in value if code.strip())

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            results = list(self._findings())
        except Exception as exc:  # see the module docstring: never raise into flake8
            from rocmlint.catalog.loader import CheckFileError
            from rocmlint.config import ConfigError
            from rocmlint.engine import SelectionError

            if isinstance(exc, (ConfigError, SelectionError, CheckFileError)):
                text = f"{ERROR_CODE} rocmlint configuration error, this file was not checked: {exc}"
            else:
                text = f"{ERROR_CODE} rocmlint internal error, this file was not checked: {type(exc).__name__}: {exc}"
            results = [(1, 0, " ".join(text.split()), type(self))]
        yield from results

    def _findings(self) -> Iterator[tuple[int, int, str, type]]:
        from rocmlint.config import Config, check_selectors, config_for_file
        from rocmlint.engine import check_python_tree, preview_gate
        from rocmlint.settings import ignored_in_file

        path = Path(self.filename)
        config = Config() if self.isolated else config_for_file(path)
        if self.rocm_ignore:
            check_selectors(list(self.rocm_ignore), "flake8 option rocm-ignore")
        checks, excludes = _python_checks(config, self.rocm_ignore)
        if not checks or (excludes is not None and excludes.excluded(path, False)):
            return
        ignored = config.ignored_here(path)
        # As the scanner's project pass does: a package of the project built apart for NVIDIA
        # only is not reported (rocmlint.build.project_root).
        from rocmlint.build.project_root import nvidia_only_subproject

        if nvidia_only_subproject(self.filename) is not None:
            checks = [c for c in checks if not c.gated]
        text = "".join(self.lines).replace("\r\n", "\n")
        previewed = {c.id: c for c in checks if c.preview_kinds} if not config.preview else {}
        for finding in check_python_tree(self.tree, self.filename, text, checks, config.target):
            if ignored and ignored_in_file(finding.check_id, ignored):
                continue
            if finding.check_id in previewed and preview_gate(previewed[finding.check_id], self.filename):
                continue
            yield finding.line, finding.col, f"{finding.check_id} {finding.message}", type(self)
