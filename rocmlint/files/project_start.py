"""Where a project starts: the folder its build files sit in (below which its own folders lie),
or, for Python code with no build file around it, its top package. Everything that looks at
a file's folders asks here, so that folders above a project (where someone put the checkout)
never count as part of it."""

from __future__ import annotations

import os
from functools import lru_cache

from rocmlint.files.result_cache import external_input
from rocmlint.files.tree import ProjectFiles, is_within

BUILD_FILE_NAMES = ("CMakeLists.txt", "setup.py", "Makefile", "makefile", "GNUmakefile")
ROOT_MARKERS = BUILD_FILE_NAMES + ("pyproject.toml",)
# Every name the look-ups that climb from a file to its project ask about in a folder
# (find_project_root, project_kind, package_top, the module name of a file): what a kept
# project pass must find unchanged in each folder above the trees it walked.
NAMES_ASKED_ABOVE = ROOT_MARKERS + (".git", "__init__.py")


@lru_cache(maxsize=4096)
def find_project_root(directory: str, ceiling: str | None = None) -> str | None:
    """The project a directory belongs to: the highest ancestor (the directory itself
    included) that holds a build file, not above the git work tree it is in, never the
    home directory or above it, and never above `ceiling` (an absolute folder: outside git,
    the highest folder the user asked to scan, so that a build file in a shared parent folder
    such as /tmp is not taken for the project's). None when there is none. A git submodule's
    checkout is part of the project that holds it (its vendored code), not a work tree of its
    own."""
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
        if any(name in names for name in ROOT_MARKERS):
            best = current
        if ".git" in names and not _is_submodule_checkout(os.path.join(current, ".git")):
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return best


def _is_submodule_checkout(dot_git: str) -> bool:
    """A `.git` file (not a folder) that points into a superproject's `.git/modules/`: what
    git leaves in a submodule's checkout, and what source archives of projects with
    submodules keep (llama.cpp in llama-cpp-python, Composable Kernel in aiter). A `.git`
    file of a linked work tree points into `.git/worktrees/` and ends the walk as a folder
    does."""
    if not os.path.isfile(dot_git) or os.path.islink(dot_git):
        return False
    data = ProjectFiles(os.path.dirname(dot_git)).read(dot_git, 4096, prefix=True)  # a recorded read
    if data is None:
        return False
    first = data.decode("utf-8", errors="replace").strip()
    target = first.partition("gitdir:")[2].strip().replace("\\", "/")
    return first.startswith("gitdir:") and "/modules/" in f"/{target}/"


def package_top(directory: str) -> str | None:
    """The top folder of the Python package `directory` is in (torch/ for torch/include/ATen)."""
    current = directory
    while not os.path.isfile(os.path.join(current, "__init__.py")):
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    while os.path.isfile(os.path.join(os.path.dirname(current), "__init__.py")):
        current = os.path.dirname(current)
    return current


@external_input
def folders_in_project(path: str) -> str | None:
    """The folders between where the file's project starts and the file, `/`-separated and
    outermost first ("" at the start itself): below its project root, or, with none, from its
    top Python package down (the package's own name included). None when the file is in
    neither. Folders above a project are where someone put the checkout (`/ci/checkout/`,
    `~/amd/`) and say nothing about its code."""
    directory = os.path.dirname(os.path.abspath(path))
    project = find_project_root(directory)
    if project is not None:
        below = os.path.relpath(directory, project)
    elif (package := package_top(directory)) is not None:
        below = os.path.relpath(directory, os.path.dirname(package))
    else:
        return None
    return "" if below == os.curdir else below.replace(os.sep, "/")
