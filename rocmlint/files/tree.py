"""The files of one project tree, as the project pass and the build readers read them.

A build file names other files (`include(cmake/x.cmake)`, `#include "x.h"`, globs), and a
project's verdicts must come from the project alone: never from a file outside its root, nor
through a symbolic link that leaves it, nor from a named pipe or a device in a file's place
(one would block the scan, the other never end). Every file the project pass and the build
readers open goes through `ProjectFiles`, and every glob they expand through `glob_within`;
what lies inside is compared by whole path components (`is_within`), never as a string prefix.

Because every read goes through here, a project pass can be recorded (`start_reading`): the
files it read, with a hash of the bytes and each file's signature (size, modification and
change times, inode), and the trees it walked, each listed when the walk starts. A later scan
keeps the pass's answers only while all of that still holds (rocmlint.project.kept).
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
import time

from rocmlint.files.discovery import ReadError, RealPaths, TooLarge, read_regular_file

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
        self._real_paths = RealPaths()  # thousands of files in a few hundred folders

    def outside(self, path: str) -> str | None:
        """Why `path` is not a file of the tree, or None."""
        absolute = os.path.abspath(path)
        if not is_within(absolute, self.root):
            return "outside the project"
        if not is_within(self._real_paths.of(absolute, os.path.islink(absolute)), self.real_root):
            return "a symbolic link to a file outside the project"
        return None

    def read(self, path: str, limit: int = PROJECT_FILE_LIMIT, *, prefix: bool = False) -> bytes | None:
        """The bytes of a file of the tree, or None. Why is kept in `refused` for a file outside
        the tree, a link out of it and anything but a regular file; a missing, unreadable or
        too large file is simply not read. With `prefix`, a longer file gives its first `limit`
        bytes."""
        if _reading is not None:
            return _reading.read(self, path, limit, prefix)
        return self._read(path, limit, prefix)

    def _read(self, path: str, limit: int, prefix: bool) -> bytes | None:
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


# --- what a project pass read -----------------------------------------------------------------

# A file whose modification or change time is this close to when it was read may be changed
# again within the same tick of its file system's clock (1 or 2 seconds on some) and keep its
# signature: its bytes are compared whenever its read is checked, as git does for such files.
RACY_NANOSECONDS = 2_000_000_000
# Folders a project pass never lists: version control, compiled Python and tools' caches (a
# file in one that a build file names is still recorded when it is read).
UNLISTED_FOLDERS = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})

# A tree with more names than this is not recorded (a pass over it is not kept).
MAX_LISTED = 1_000_000

_reading: "Reading | None" = None


def file_signature(path: str) -> list[int] | None:
    """Size, modification and change times and inode of the file at `path` (through a link,
    as a read opens it), or None."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


def _digest(data: bytes | None) -> str | None:
    if data is None:
        return None
    import hashlib

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _kind(path: str) -> str:
    """What is at `path`: "-" nothing, "d" a folder, "f" a regular file, "o" anything else, "l"
    and the link's text and what it leads to for a symbolic link."""
    import stat

    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return "-"
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        try:
            followed = os.stat(path).st_mode
            leads = "d" if stat.S_ISDIR(followed) else "f" if stat.S_ISREG(followed) else "o"
        except (OSError, ValueError):
            leads = "-"
        return f"l{leads}{target}"
    return "d" if stat.S_ISDIR(info.st_mode) else "f" if stat.S_ISREG(info.st_mode) else "o"


def listing_digest(root: str, unlisted: str | None = None) -> str | None:
    """A hash of every name under `root` and what it is (_kind), folders walked without
    following links, but not inside UNLISTED_FOLDERS nor the folder `unlisted` (the cache's
    own, should it be inside): any file or folder added, removed, renamed or turned into a
    link changes it. None past MAX_LISTED names (the whole file system, say)."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    stack = [root]
    count = 0
    while stack:
        folder = stack.pop()
        relative = os.path.relpath(folder, root)
        try:
            with os.scandir(folder) as listed:
                entries = sorted(listed, key=lambda entry: entry.name)
        except (OSError, ValueError) as exc:
            digest.update(f"{relative}\0!{getattr(exc, 'errno', None)}\n".encode("utf-8", "surrogateescape"))
            continue
        count += len(entries)
        if count > MAX_LISTED:
            return None
        for entry in entries:
            try:
                if entry.is_symlink():
                    kind = _kind(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    kind = "d"
                    if entry.name not in UNLISTED_FOLDERS and entry.path != unlisted:
                        stack.append(entry.path)
                else:
                    kind = "f" if entry.is_file(follow_symlinks=False) else "o"
            except OSError:
                kind = "?"
            digest.update(f"{relative}/{entry.name}\0{kind}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


class Reading:
    """What one project pass read (see the module docstring): `trees` (root -> [its real
    path, listing_digest]), `reads` ((root, path, limit, prefix) -> [signature, racy, hash of
    the bytes, why not read]) and `folders` (folder -> _kind of each of `names_above` in it:
    where the pass asks whether a project starts, above the trees it walks). `keepable` is
    False when something read may have changed while it was read."""

    def __init__(self, names_above: tuple[str, ...], unlisted: str | None = None, listed_elsewhere: tuple[str, ...] = ()):
        self.names_above = tuple(names_above)
        self.unlisted = os.path.abspath(unlisted) if unlisted else None
        self.trees: dict[str, list] = {}
        # Trees the recording this one is added to (add) lists: their folders are not recorded here.
        self._listed_elsewhere = tuple(os.path.abspath(root) for root in listed_elsewhere)
        self.reads: dict[tuple, list] = {}
        self.folders: dict[str, str] = {}
        self._inside: set[str] = set()  # folders inside a tree, not recorded
        self.keepable = True

    def note_tree(self, root: str) -> None:
        root = os.path.abspath(root)
        if root in self.trees or any(is_within(root, tree) for tree in self.trees):
            return  # listed with the tree it is in
        listed = listing_digest(root, self.unlisted)
        self.keepable = self.keepable and listed is not None
        self.trees[root] = [os.path.realpath(root), listed]
        self.note_folders([root])

    def note_folders(self, paths) -> None:
        """Record the folders that hold each of `paths` (a file or a folder), up to the top."""
        for path in paths:
            folder = os.path.abspath(path)
            while folder not in self.folders and folder not in self._inside:
                if any(is_within(folder, tree) and folder != tree for tree in (*self.trees, *self._listed_elsewhere)):
                    self._inside.add(folder)  # listed with its tree
                else:
                    self.folders[folder] = _kinds(folder, self.names_above)
                parent = os.path.dirname(folder)
                if parent == folder:
                    break
                folder = parent

    def read(self, files: ProjectFiles, path: str, limit: int, prefix: bool) -> bytes | None:
        key = (files.root, path, limit, prefix)
        if key in self.reads:
            return files._read(path, limit, prefix)
        before = time.time_ns()
        signature = file_signature(path)
        data = files._read(path, limit, prefix)
        racy = signature is None or max(signature[1], signature[2]) >= before - RACY_NANOSECONDS
        self.reads[key] = [signature, racy, _digest(data), files.refused.get(path)]
        self.note_folders([os.path.dirname(os.path.abspath(path))])
        return data

    def note_known(self, path: str, since: int, unchanged) -> None:
        """A file the pass does not read because the per-file pass read it, since `since` (in
        time.time_ns()), and handed over what the pass needs of it. Its bytes now are those
        the per-file pass read when the file has not changed since; else `unchanged(data)`
        says whether what the pass needs of them is the same (or nothing is kept)."""
        signature = file_signature(path)
        try:
            data = read_regular_file(path, PROJECT_FILE_LIMIT)
        except ReadError:
            data = None
        if data is None or signature is None or file_signature(path) != signature:
            self.keepable = False
            return
        racy = max(signature[1], signature[2]) >= since - RACY_NANOSECONDS
        if racy and not unchanged(data):
            self.keepable = False
            return
        self.reads[(None, path, PROJECT_FILE_LIMIT, False)] = [signature, racy, _digest(data), None]

    def as_json(self) -> dict:
        return {
            "trees": [[root, real, digest] for root, (real, digest) in self.trees.items()],
            "reads": [[*key, *value] for key, value in self.reads.items()],
            "folders": [[folder, kinds] for folder, kinds in self.folders.items()],
        }

    def add(self, recorded: dict, keepable: bool) -> None:
        """What another recording of the same pass read (its as_json, made in a worker
        process), and whether it can be kept."""
        self.keepable = self.keepable and keepable
        for root, real, digest in recorded["trees"]:
            self.trees.setdefault(root, [real, digest])
        for entry in recorded["reads"]:
            self.reads.setdefault(tuple(entry[:4]), list(entry[4:]))
        for folder, kinds in recorded["folders"]:
            self.folders.setdefault(folder, kinds)


def _kinds(folder: str, names: tuple[str, ...]) -> str:
    return "\0".join(_kind(os.path.join(folder, name)) for name in names)


def start_reading(names_above: tuple[str, ...], unlisted: str | None = None, listed_elsewhere: tuple[str, ...] = ()) -> Reading:
    """Record what the project pass reads from now on (until stop_reading)."""
    global _reading
    _reading = Reading(names_above, unlisted, listed_elsewhere)
    return _reading


def stop_reading() -> None:
    global _reading
    _reading = None


def add_to_reading(recorded: dict | None, keepable: bool) -> None:
    """Add what another process read for the pass being recorded (Reading.add), if one is."""
    if _reading is not None and recorded is not None:
        _reading.add(recorded, keepable)


def note_tree(root: str) -> None:
    """Called by each walk of a whole tree before it starts (see Reading)."""
    if _reading is not None:
        _reading.note_tree(root)


def still_read_the_same(record: dict, names_above: tuple[str, ...], unlisted: str | None = None) -> bool | None:
    """Whether what a recorded pass read (Reading.as_json) reads the same now: every folder
    above has the same names, every tree the same listing, every file the same bytes (a file
    whose signature is unchanged and was not racy is not read again). Anything of another
    shape is False. None: True, and a file read again because it was racy or its signature
    changed has settled; its entry in `record` now says so (the record is worth keeping)."""
    unlisted = os.path.abspath(unlisted) if unlisted else None
    settled = False
    try:
        for folder, kinds in record["folders"]:
            if _kinds(folder, tuple(names_above)) != kinds:
                return False
        checked: dict[str, list[int] | None] = {}
        for entry in record["reads"]:
            root, path, limit, prefix, signature, racy, digest, why = entry
            if not (type(limit) is int and 0 < limit <= PROJECT_FILE_LIMIT):
                return False  # never more than a pass reads
            if digest is not None and not racy:
                if path not in checked:
                    checked[path] = file_signature(path)
                if checked[path] == signature:
                    continue
            before = time.time_ns()
            now = file_signature(path)
            if root is None:
                try:
                    data = read_regular_file(path, limit)
                except ReadError:
                    return False
                refused = None
            else:
                files = ProjectFiles(root)
                data = files._read(path, limit, bool(prefix))
                refused = files.refused.get(path)
            if _digest(data) != digest or refused != why:
                return False
            if digest is not None and now is not None and max(now[1], now[2]) < before - RACY_NANOSECONDS:
                entry[4], entry[5] = now, False
                settled = True
        for root, real, digest in record["trees"]:
            if digest is None or os.path.realpath(root) != real or listing_digest(root, unlisted) != digest:
                return False
    except (TypeError, ValueError, KeyError, OSError):
        return False
    return None if settled else True


# --- answers kept in memory -------------------------------------------------------------------

# Caches of rocmlint's own files (the check catalog, compiled matchers, pattern lists): never
# stale while rocmlint runs. Every other cache in rocmlint answers a question about the tree.
_OWN_CACHES = frozenset(
    {"load_catalog", "compile_matcher", "line_columns", "_patterns", "checks_for", "_with_command_line", "_rocmlint_stamp"}
)


class KeptAnswers(dict):
    """Answers read from the tree that a module keeps in memory, by key (a dict): emptied by
    forget_what_was_read_from_disk with the functions kept with functools.lru_cache, which it
    finds by their `cache_clear`."""

    def cache_clear(self) -> None:
        self.clear()


def forget_what_was_read_from_disk() -> None:
    """Empty every cache in rocmlint that holds an answer read from the tree (functions kept
    with functools.lru_cache in its modules, and KeptAnswers), but those of rocmlint's own
    files. Found by looking rather than listed, so that a cache added later is not forgotten
    here. The language server calls it when files change; a recorded project pass first, so
    that it reads again whatever it needs (an answer kept in memory would not be recorded)."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("rocmlint.") or name.startswith(("rocmlint.runtime", "rocmlint.server")) or module is None:
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, type):
                continue  # KeptAnswers itself, not one of them
            clear = getattr(value, "cache_clear", None)
            if clear is None or not callable(clear):
                continue
            wrapped = getattr(value, "__wrapped__", None)
            own_name = getattr(wrapped, "__name__", attribute)
            if own_name in _OWN_CACHES or attribute in _OWN_CACHES:
                continue
            clear()
