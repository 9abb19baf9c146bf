"""Where a project starts: the folder its build files sit in, and the folders in it that hold
other projects' code. Shared by the build readers and the project model."""

from __future__ import annotations

import os
from functools import lru_cache

from rocmlint.files.tree import is_within

BUILD_FILE_NAMES = ("CMakeLists.txt", "setup.py", "Makefile", "makefile", "GNUmakefile")
_ROOT_MARKERS = BUILD_FILE_NAMES + ("pyproject.toml",)
# Where projects keep other projects' code (besides git submodules, read from .gitmodules).
VENDOR_DIRECTORIES = frozenset(
    {"third_party", "third-party", "thirdparty", "3rdparty", "3rd_party", "vendor", "vendored", "external",
     "externals", "extern", "deps", "submodules", "subprojects"}
)


@lru_cache(maxsize=4096)
def find_project_root(directory: str, ceiling: str | None = None) -> str | None:
    """The project a directory belongs to: the highest ancestor (the directory itself
    included) that holds a build file, not above the git work tree it is in, never the
    home directory or above it, and never above `ceiling` (an absolute folder: outside git,
    the highest folder the user asked to scan, so that a build file in a shared parent folder
    such as /tmp is not taken for the project's). None when there is none."""
    directory = os.path.abspath(directory)
    home = os.path.expanduser("~")
    best = None
    current = directory
    while True:
        if current == home or (home.startswith(current + os.sep) and current != directory):
            break
        if ceiling is not None and not is_within(current, ceiling):
            break
        try:
            names = set(os.listdir(current))
        except OSError:
            names = set()
        if any(name in names for name in _ROOT_MARKERS):
            best = current
        if ".git" in names:
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return best
