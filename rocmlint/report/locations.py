"""Where report paths are relative to.

Code-scanning services match a result to a file by its path inside the repository, so SARIF,
GitLab and GitHub reports name files relative to the repository root: the top level of the git
work tree that holds the first scanned path. Outside a git work tree SARIF and GitLab use the
scan root (the folder that holds every scanned path), and GitHub annotations the current
directory, where a workflow runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence


def git_top_level(path: str | Path) -> Path | None:
    """The nearest folder at or above `path` with a `.git` entry (a work tree or a submodule)."""
    directory = Path(os.path.abspath(path))
    if not directory.is_dir():
        directory = directory.parent
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def scan_root(paths: Sequence[str | Path]) -> Path:
    """The deepest folder that holds every scanned path."""
    folders = []
    for path in paths or (".",):
        absolute = os.path.abspath(path)
        folders.append(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))
    return Path(os.path.commonpath(folders))


def source_root(paths: Sequence[str | Path]) -> Path:
    """SARIF's %SRCROOT% and GitLab's base: the git top level, else the scan root."""
    first = paths[0] if paths else "."
    return git_top_level(first) or scan_root(paths)


def relative_to(path: str, root: Path) -> str | None:
    """`path` as a "/"-separated path relative to `root`, or None when it lies outside."""
    relative = os.path.relpath(os.path.abspath(path), str(root))
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative.replace(os.sep, "/")
