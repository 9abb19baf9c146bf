"""The flake8 face: hands flake8's own tree to the engine and converts columns.

Registered as the flake8 extension `ROC` (flake8 5+ accepts at most three letters in an entry
name); the codes it reports are ROCMnnn, so `flake8 --select ROCM` picks them. It honours
`[tool.rocmlint]` (select, ignore, exclude, rocm-version, arch) like the scanner does.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from rocmlint import __version__
from rocmlint.config import Config, find_config
from rocmlint.discovery import Excludes
from rocmlint.engine import check_python_tree, select_checks
from rocmlint.findings import utf8_column


@lru_cache(maxsize=64)
def _checks_for(config: Config):
    checks = select_checks(list(config.select) if config.select is not None else None, list(config.ignore))
    return [c for c in checks if "python" in c.languages], Excludes(config.exclude, config.root)


class Flake8Checker:
    name = "rocmlint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]):
        self.tree = tree
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        path = Path(self.filename)
        config = find_config(path.parent if str(path.parent) else Path("."))
        checks, excludes = _checks_for(config)
        if not checks or excludes.excluded(path, False):
            return
        text = "".join(self.lines).replace("\r\n", "\n")
        for finding in check_python_tree(self.tree, self.filename, text, checks, config.target):
            # flake8 expects the column in the unit of its `ast` tree: UTF-8 bytes.
            col = utf8_column(finding.context.get(finding.line, ""), finding.col)
            yield finding.line, col, f"{finding.check_id} {finding.message}", type(self)
