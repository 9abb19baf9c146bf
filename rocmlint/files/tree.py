"""The files of one project tree, as the project pass and the build readers read them.

A build file names other files (`include(cmake/x.cmake)`, `#include "x.h"`, globs), and a
project's verdicts must come from the project alone: never from a file outside its root, nor
through a symbolic link that leaves it, nor from a named pipe or a device in a file's place
(one would block the scan, the other never end). Every file the project pass and the build
readers open goes through `ProjectFiles`, and every glob they expand through `glob_within`;
what lies inside is compared by whole path components (`is_within`), never as a string prefix.
"""

from __future__ import annotations

import fnmatch
import os
import re

from rocmlint.files.discovery import ReadError, TooLarge, read_regular_file

# The most the project pass reads of one file: a larger one is not read.
PROJECT_FILE_LIMIT = 8 * 1024 * 1024


def is_within(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies below it, both normalised and both absolute or both
    relative to the current directory (`""` or `.` for it): `/x/proj-x2` is not within
    `/x/proj-x`, and `../x` is not within `.`."""
    if path == root:
        return True
    if root in ("", os.curdir):
        return not os.path.isabs(path) and path != os.pardir and not path.startswith(os.pardir + os.sep)
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


class ProjectFiles:
    """Reads the files of the tree under `root`: only regular files (a link is followed only
    where its target is inside the tree too), at most a size limit, opened without blocking.
    `refused` keeps why each file was not read (a path outside the tree, a link out of it, a
    pipe, a device), for the messages of those who read it."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self.real_root = os.path.realpath(self.root)
        self.refused: dict[str, str] = {}

    def outside(self, path: str) -> str | None:
        """Why `path` is not a file of the tree, or None."""
        absolute = os.path.abspath(path)
        if not is_within(absolute, self.root):
            return "outside the project"
        if not is_within(os.path.realpath(absolute), self.real_root):
            return "a symbolic link to a file outside the project"
        return None

    def read(self, path: str, limit: int = PROJECT_FILE_LIMIT, *, prefix: bool = False) -> bytes | None:
        """The bytes of a file of the tree, or None. Why is kept in `refused` for a file outside
        the tree, a link out of it and anything but a regular file; a missing, unreadable or
        too large file is simply not read. With `prefix`, a longer file gives its first `limit`
        bytes."""
        why = self.outside(path)
        if why is None:
            try:
                return read_regular_file(path, limit, prefix=prefix)
            except TooLarge:
                return None
            except ReadError as exc:
                why = str(exc)
                if not why.startswith("not a regular file"):
                    return None  # missing or unreadable: as any file that cannot be read
        self.refused[path] = why
        return None

    def text(self, path: str, limit: int = PROJECT_FILE_LIMIT) -> str | None:
        """A file of the tree as text (UTF-8, undecodable bytes replaced), or None: not a
        regular file of the tree, unreadable, over `limit` bytes, or binary (a NUL byte in its
        first 8 KiB)."""
        data = self.read(path, limit)
        if data is None or b"\0" in data[:8192]:
            return None
        return data.decode("utf-8", errors="replace")

    def opened_text(self, path: str, characters: int | None = None) -> str | None:
        """A file of the tree as `open(path, encoding="utf-8", errors="replace").read(characters)`
        gives it (line ends made `\n`), at most PROJECT_FILE_LIMIT bytes of it; None as for read."""
        limit = PROJECT_FILE_LIMIT if characters is None else min(PROJECT_FILE_LIMIT, 4 * characters)
        data = self.read(path, limit, prefix=characters is not None)
        if data is None:
            return None
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        return text if characters is None else text[:characters]


# --- globs ------------------------------------------------------------------------------------

_MAGIC = re.compile(r"[*?[]")


def glob_within(pattern: str, root: str, *, recursive: bool = False, kind: str = "file") -> list[str]:
    """What `glob.glob(pattern, recursive=recursive)` matches, sorted, kept to the tree under
    `root`: regular files (`kind` "file"), folders ("folder") or both ("any"), each inside the
    tree by its real path too. A pattern that does not start inside the root matches nothing, and `**` never enters a
    folder through a symbolic link (a link to `/` would walk the whole file system), so the
    walk never leaves the tree. Otherwise as glob: `*`, `?` and `[...]` within one name, names
    that start with a dot only where the pattern's name does, `**` for any number of folders
    when `recursive`."""
    relative_to_cwd = not os.path.isabs(pattern)
    root = os.path.abspath(root)
    pattern = os.path.normpath(os.path.abspath(pattern))
    if not is_within(pattern, root):
        return []
    real_root = os.path.realpath(root)
    relative = os.path.relpath(pattern, root)
    parts = [] if relative == os.curdir else relative.split(os.sep)
    found: set[str] = set()
    _expand(root, parts, recursive, real_root, found)
    kept = []
    for path in found:
        try:
            is_folder = os.path.isdir(path)
            wanted = is_folder if kind == "folder" else os.path.isfile(path) if kind == "file" else is_folder or os.path.isfile(path)
        except (OSError, ValueError):
            continue
        if wanted and is_within(os.path.realpath(path), real_root):
            kept.append(os.path.relpath(path) if relative_to_cwd else path)  # in the pattern's form, as glob
    return sorted(kept)


def _names(directory: str) -> list[tuple[str, bool]]:
    """(name, whether it is a folder, not through a link) of each entry of `directory`."""
    try:
        with os.scandir(directory) as entries:
            listed = []
            for entry in entries:
                try:
                    listed.append((entry.name, entry.is_dir(follow_symlinks=False)))
                except OSError:
                    listed.append((entry.name, False))
            return listed
    except (OSError, ValueError):
        return []


def _expand(directory: str, parts: list[str], recursive: bool, real_root: str, found: set[str]) -> None:
    """Add to `found` what `parts` match below `directory`."""
    if not parts:
        found.add(directory)
        return
    part, rest = parts[0], parts[1:]
    if recursive and part == "**":
        # Zero folders, then every folder below: never a hidden one, never through a link.
        stack = [directory]
        while stack:
            current = stack.pop()
            if rest:
                _expand(current, rest, recursive, real_root, found)
            else:
                found.add(current)
            for name, is_folder in _names(current):
                if name.startswith("."):
                    continue
                if is_folder:
                    stack.append(os.path.join(current, name))
                elif not rest:
                    found.add(os.path.join(current, name))
        return
    if _MAGIC.search(part):
        names = [name for name, _ in _names(directory) if fnmatch.fnmatch(name, part) and (part.startswith(".") or not name.startswith("."))]
    else:
        names = [part] if os.path.lexists(os.path.join(directory, part)) else []
    for name in names:
        child = os.path.join(directory, name)
        if not rest:
            found.add(child)
        elif os.path.isdir(child) and (not os.path.islink(child) or is_within(os.path.realpath(child), real_root)):
            _expand(child, rest, recursive, real_root, found)
