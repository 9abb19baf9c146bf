"""Which files a scan reads, and why each file it leaves out is left out.

Inside a git work tree, a directory's files are the ones git lists: tracked files (even those
a `.gitignore` matches: git keeps tracking them) and untracked files that no ignore rule
matches (`.gitignore` files at every level, `.git/info/exclude`, `core.excludesFile`), from
`git ls-files`. Outside one (or without git), the directory is walked and `.gitignore` files
are applied as git would: each relative to its own folder, those of the folders above the
scanned one too, a nested `!pattern` re-including what a parent ignored (rocmlint.files.gitignore).
Either way, untracked version-control folders, virtual environments (any folder with a
`pyvenv.cfg`), caches and build output are left out, and so are the `exclude` patterns of
the configuration and the command line.

A file is read only when it is a regular file: named pipes, devices and sockets are
reported and never opened (a FIFO would block the scan, `/dev/zero` would never end);
broken symbolic links, link loops and paths too long for the system are reported. Found
while walking, a symbolic link to a directory is not followed, and one to a file outside
the scanned directory is not read (git stores links as links); each is listed with its
reason. A path named on the command line is read wherever it points.

What could not be read is a Problem, reported in every format; what was left out on
purpose is listed on request (`rocmlint scan --show-skipped`).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Iterator

from rocmlint.findings import Problem
from rocmlint.files.gitignore import PatternList, decide
from rocmlint.files.languages import language_of
from rocmlint.records import field, record

DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", ".eggs", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", "__pycache__", "__pypackages__", "node_modules", "build",
        "dist", "_build", "buck-out", ".direnv",
    }
)


# Where rocmlint kept results in the project before they moved to the user's cache folder
# (rocmlint.files.result_cache); older checkouts still have one. Never scanned, and not listed as
# left out either, so that a scan's report does not depend on whether one ran before.
OWN_CACHE_DIR = ".rocmlint_cache"


@record
class Target:
    path: str  # as shown to the user: "/"-separated, relative to the cwd when under it
    language: str


@record(mutable=True)
class FileSet:
    """The files a scan reads, with what it could not read and what it left out."""

    targets: list[Target] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # could not be read: always reported
    left_out: list[Problem] = field(default_factory=list)  # left out on purpose: listed on request


def relative_to_cwd(path: str | Path) -> str | None:
    """The "/"-separated path relative to the current directory, or None when it is outside."""
    absolute, cwd = os.path.abspath(path), os.getcwd()
    if absolute.startswith(cwd + os.sep):
        return Path(os.path.relpath(absolute, cwd)).as_posix()
    return None


def _display(path: str | Path) -> str:
    return relative_to_cwd(path) or Path(path).as_posix()


def _posix(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path


# --- what a readable regular file is ---------------------------------------------------------


def unreadable_reason(path: str) -> str | None:
    """Why `path` cannot be read as a regular file (following symbolic links), or None.

    This is the one place that decides it: discovery asks it before listing a file, and
    read_regular_file checks the same on the open file."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return _stat_error(path, exc)
    return _kind_problem(info.st_mode)


def _stat_error(path: str, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "cannot read: symbolic link loop"
    if exc.errno == errno.ENAMETOOLONG:
        return "cannot read: path too long for the file system"
    if exc.errno in (errno.ENOENT, errno.ENOTDIR) and os.path.islink(path):
        return "cannot read: broken symbolic link (its target does not exist)"
    return f"cannot read: {exc.strerror or exc}"


def _kind_problem(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "not a regular file: a named pipe (FIFO), never opened"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "not a regular file: a device, never read"
    if stat.S_ISSOCK(mode):
        return "not a regular file: a socket, never opened"
    if stat.S_ISDIR(mode):
        return "not a regular file: a directory"
    return "not a regular file"


class ReadError(Exception):
    """Why a file could not be read (the message is the reason shown to the user)."""


class TooLarge(ReadError):
    pass


def read_regular_file(path: str, max_bytes: int, *, prefix: bool = False) -> bytes:
    """The bytes of a regular file, at most `max_bytes` of them (0: no limit); with `prefix`,
    the first `max_bytes` bytes of a longer file rather than TooLarge.

    Opened without blocking and checked on the open descriptor, so a FIFO or device put in
    a file's place after discovery is still never read; the size limit counts the bytes
    read, not what `stat` says."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        raise ReadError(_stat_error(path, exc)) from None
    try:
        info = os.fstat(descriptor)
        problem = _kind_problem(info.st_mode)
        if problem is not None:
            raise ReadError(problem)
        if max_bytes and info.st_size > max_bytes and not prefix:
            raise TooLarge(f"{info.st_size} bytes is over the size limit of {max_bytes} bytes (max-file-size)")
        chunks = []
        total = 0
        while True:
            chunk = os.read(descriptor, 1 << 20 if not (prefix and max_bytes) else min(1 << 20, max_bytes - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if prefix and max_bytes and total >= max_bytes:
                break
            if max_bytes and total > max_bytes:
                raise TooLarge(f"more than {max_bytes} bytes, over the size limit (max-file-size)")
        return b"".join(chunks)
    except OSError as exc:
        raise ReadError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)


# --- ignore rules -----------------------------------------------------------------------------


def _read_lines(path: str) -> list[str] | None:
    try:
        data = read_regular_file(path, 1 << 20)
    except ReadError:
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def _gitignore(directory: str) -> PatternList | None:
    path = os.path.join(directory, ".gitignore")
    if not os.path.isfile(path):
        return None
    lines = _read_lines(path)
    if not lines:
        return None
    patterns = PatternList(lines, _posix(os.path.abspath(directory)), _display(path))
    return patterns if patterns.patterns else None


def _ancestor_ignores(directory: str) -> tuple[list[PatternList], str | None]:
    """The ignore files that apply to `directory` (absolute) from above it, outermost first,
    up to the root of its git work tree (or of the file system); with the first ancestor
    (or the directory itself) that they ignore, if any."""
    chain = [directory]
    while True:
        parent = os.path.dirname(chain[-1])
        if parent == chain[-1] or os.path.exists(os.path.join(chain[-1], ".git")):
            break
        chain.append(parent)
    chain.reverse()  # the work tree's root (or "/") first
    lists: list[PatternList] = []
    exclude = os.path.join(chain[0], ".git", "info", "exclude")
    if os.path.isfile(exclude):
        lines = _read_lines(exclude)
        if lines:
            lists.append(PatternList(lines, _posix(chain[0]), ".git/info/exclude"))
    ignored_at = None
    for index, folder in enumerate(chain):
        if index and ignored_at is None:
            decision = decide(lists, _posix(folder), True)
            if decision is not None and decision.ignored:
                ignored_at = folder
        if index < len(chain) - 1:
            own = _gitignore(folder)
            if own is not None:
                lists.append(own)
    return lists, ignored_at


class Excludes:
    """User `exclude` patterns, gitignore-style, relative to `root`."""

    def __init__(self, patterns: tuple[str, ...], root: Path):
        self.root = root.resolve()
        self.patterns = PatternList(patterns, _posix(str(self.root)), "exclude") if patterns else None

    def excluded(self, path: Path, is_dir: bool) -> bool:
        return self.reason(path, is_dir) is not None

    def reason(self, path: Path | str, is_dir: bool) -> str | None:
        if self.patterns is None:
            return None
        absolute = os.path.abspath(path)
        relative = self.patterns.relative(_posix(os.path.realpath(absolute))) or self.patterns.relative(_posix(absolute))
        if relative is None:
            relative = Path(path).as_posix()
        decision = self.patterns.leaves_out(relative, is_dir)
        return f"excluded by the pattern `{decision.pattern.text}` (exclude)" if decision is not None else None


def _default_excluded(name: str, directory: str) -> str | None:
    if name in DEFAULT_EXCLUDED_DIRS or name.endswith(".egg-info"):
        return "a version-control, cache, environment or build-output folder"
    try:
        if os.path.isfile(os.path.join(directory, "pyvenv.cfg")):
            return "a virtual environment (pyvenv.cfg)"
    except (OSError, ValueError):
        return None
    return None


# --- finding the files ----------------------------------------------------------------------


def discover(paths: list[Path], excludes: Excludes) -> Iterator[Target]:
    """Yield every file to scan under `paths`, in a stable order, each once."""
    yield from find_files(paths, excludes).targets


def find_files(paths: list[Path], excludes: Excludes, languages: set[str] | None = None, seen: set[str] | None = None) -> FileSet:
    """Every file to scan under `paths` (of `languages`, when given), each once, in a
    stable order; with what could not be read and what was left out, and why. `seen`: the
    real paths of files already found by an earlier call, which are not found again (and
    this call's are added)."""
    found = FileSet()
    if seen is None:
        seen = set()
    for given in paths:
        text = os.fspath(given)
        try:
            is_dir = os.path.isdir(text)
        except (OSError, ValueError):
            is_dir = False
        if not is_dir:
            language = language_of(text)
            if language is None or (languages is not None and language not in languages):
                continue
            reason = unreadable_reason(text)
            if reason is not None:
                found.problems.append(Problem(_display(text), reason))
                continue
            key = os.path.realpath(text)
            if key not in seen:
                seen.add(key)
                found.targets.append(Target(_display(text), language))
            continue
        _directory(text, excludes, languages, seen, found)
    return found


class RealPaths:
    """os.path.realpath of many files in few folders, resolving each folder once: a file that
    is not a link resolves to its folder's real path joined with its name, and so does a
    folder that is not a link, to its parent's (realpath looks at every part of the path)."""

    def __init__(self):
        self._folders: dict[str, str] = {}

    def of(self, path: str, is_link: bool) -> str:
        if is_link:
            return os.path.realpath(path)
        folder, name = os.path.split(path)
        return os.path.join(self._folder(folder), name)

    def _folder(self, folder: str) -> str:
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = real_folder(folder, self._folder)
        return real


def real_folder(folder: str, real_parent) -> str:
    """os.path.realpath(folder), given `real_parent` (the same question asked of the parent
    folder, answered from a cache kept by the caller): a folder that is not a symbolic link is
    its parent's real path and its own name, so each folder above many is resolved once
    (realpath looks at every part of every path)."""
    parent, name = os.path.split(folder)
    if name in ("", os.curdir, os.pardir) or os.path.islink(folder):
        return os.path.realpath(folder or os.curdir)
    return os.path.join(real_parent(parent), name)


class _Walk:
    """One scanned directory: its real path (what symbolic links may point into) and the
    sinks for what is found."""

    def __init__(self, top: str, excludes: Excludes, languages: set[str] | None, seen: set[str], found: FileSet):
        self.top = top
        self.real_top = os.path.realpath(top)
        self.excludes = excludes
        self.languages = languages
        self.seen = seen
        self.found = found
        self._real_paths = RealPaths()
        self._shown_folders: dict[str, str] = {}
        self._cwd = os.getcwd()

    def display(self, path: str) -> str:
        """_display(path), working out each folder's part once."""
        folder, name = os.path.split(path)
        if not folder:
            return _display(path)
        shown = self._shown_folders.get(folder)
        if shown is None:
            absolute = os.path.abspath(folder)
            if absolute == self._cwd:
                shown = ""
            elif absolute.startswith(self._cwd + os.sep):
                shown = Path(os.path.relpath(absolute, self._cwd)).as_posix() + "/"
            else:
                shown = Path(folder).as_posix()
                shown = "" if shown == "." else shown if shown.endswith("/") else shown + "/"
            self._shown_folders[folder] = shown
        return shown + name

    def wanted_language(self, name: str) -> str | None:
        language = language_of(name)
        if language is None or (self.languages is not None and language not in self.languages):
            return None
        return language

    def file(self, path: str, language: str, tracked: bool = False, mode: int | None = None) -> None:
        """A file found in the directory: read it, or say why not. `mode`: its st_mode, not
        following a link, where the caller knows it (the listing's file type, an lstat)."""
        if mode is None:
            try:
                mode = os.lstat(path).st_mode
            except (OSError, ValueError):
                pass  # unreadable_reason says why
        is_link = mode is not None and stat.S_ISLNK(mode)
        if is_link:
            real = os.path.realpath(path)
            inside = real == self.real_top or real.startswith(self.real_top.rstrip(os.sep) + os.sep)
            reason = unreadable_reason(path)
            if reason is not None and reason.startswith("cannot read"):
                self.found.problems.append(Problem(_display(path), reason))  # broken, a loop
                return
            if reason is not None and "directory" in reason:
                self.found.left_out.append(Problem(_display(path), "symbolic link to a directory: not followed"))
                return
            if not inside:
                self.found.left_out.append(
                    Problem(_display(path), "symbolic link to a file outside the scanned directory: not read (name it to scan it)")
                )
                return
            if reason is not None:
                self.found.problems.append(Problem(_display(path), reason))
                return
        else:
            # Not a link: what lstat found is what stat would find.
            reason = unreadable_reason(path) if mode is None else _kind_problem(mode)
            if reason is not None:
                if tracked and reason.startswith("cannot read: ") and not os.path.lexists(path):
                    return  # a tracked file deleted from the work tree is simply not there
                self.found.problems.append(Problem(_display(path), reason))
                return
        excluded = self.excludes.reason(path, False)
        if excluded is not None:
            self.found.left_out.append(Problem(_display(path), excluded))
            return
        key = self._real_paths.of(path, is_link)
        if key in self.seen:
            return
        self.seen.add(key)
        self.found.targets.append(Target(self.display(path), language))


def _directory(top: str, excludes: Excludes, languages: set[str] | None, seen: set[str], found: FileSet) -> None:
    walk = _Walk(top, excludes, languages, seen, found)
    listed = _git_files(top)
    if listed is not None and not listed[3]:
        _from_git(walk, top, listed)
        return
    # Outside a work tree, or a folder that git or a .gitignore above it ignores (a package in
    # a virtual environment inside a checkout): a folder named on the command line is scanned
    # all the same. The ignore files above it still apply to what is below it, pattern by
    # pattern, but the pattern that ignores the folder itself does not empty it.
    ancestors, _ = _ancestor_ignores(os.path.abspath(top))
    _walk(walk, top, ancestors)


def _walk(walk: _Walk, top: str, ancestors: list[PatternList]) -> None:
    """Walk a directory outside any git work tree (or without git), depth first, in name
    order; directories that are links are not followed."""
    stack: list[tuple[str, list[PatternList]]] = [(top, ancestors)]
    while stack:
        directory, inherited = stack.pop()
        own = _gitignore(directory)
        lists = inherited + [own] if own is not None else inherited
        try:
            with os.scandir(directory) as scanner:
                entries = sorted(scanner, key=lambda e: e.name)
        except OSError as exc:
            walk.found.problems.append(Problem(_display(directory), _stat_error(directory, exc)))
            continue
        subdirectories = []
        for entry in entries:
            path = entry.path
            absolute = _posix(os.path.abspath(path))
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name == OWN_CACHE_DIR:
                    continue
                reason = _default_excluded(entry.name, path)
                if reason is None:
                    decision = decide(lists, absolute, True)
                    if decision is not None and decision.ignored:
                        reason = f"ignored by {decision.source}:{decision.pattern.line} `{decision.pattern.text}`"
                if reason is None:
                    reason = walk.excludes.reason(path, True)
                if reason is not None:
                    walk.found.left_out.append(Problem(_display(path) + "/", reason))
                    continue
                subdirectories.append(path)
                continue
            language = walk.wanted_language(entry.name)
            if language is None:
                continue
            try:
                link_to_directory = entry.is_symlink() and os.path.isdir(path)
            except (OSError, ValueError):
                link_to_directory = False
            decision = decide(lists, absolute, link_to_directory)
            if decision is not None and decision.ignored:
                walk.found.left_out.append(
                    Problem(_display(path), f"ignored by {decision.source}:{decision.pattern.line} `{decision.pattern.text}`")
                )
                continue
            try:
                # The listing's file type, where the file system gives it: no look at the file.
                mode = stat.S_IFREG if entry.is_file(follow_symlinks=False) else None
            except OSError:
                mode = None
            walk.file(path, language, mode=mode)
        # Directories that are symbolic links: listed, not followed.
        for entry in entries:
            try:
                if entry.is_symlink() and walk.wanted_language(entry.name) is None and os.path.isdir(entry.path):
                    walk.found.left_out.append(Problem(_display(entry.path), "symbolic link to a directory: not followed"))
            except (OSError, ValueError):
                continue
        for path in reversed(subdirectories):
            stack.append((path, lists))


# --- inside a git work tree -------------------------------------------------------------------


def _git(directory: str, *arguments: str) -> bytes | None:
    import subprocess  # here: only a scan inside a git work tree runs git

    try:
        completed = subprocess.run(
            ["git", "-C", directory, *arguments],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=600,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return completed.stdout if completed.returncode == 0 else None


def git_work_tree(directory: str) -> str | None:
    """The top of the git work tree that `directory` is in, as git says (a `.git` that git does
    not take for a repository of the user's does not count), or None: outside one, without
    git, or with ROCMLINT_NO_GIT set (as for the file walk)."""
    if os.environ.get("ROCMLINT_NO_GIT"):
        return None
    top = _git(directory, "rev-parse", "--show-toplevel")
    if top is None or not top.strip():
        return None
    return os.fsdecode(top.strip())


def _git_files(directory: str) -> tuple[list[str], list[str], list[str], bool] | None:
    """(tracked, untracked and not ignored, ignored, whether `directory` itself is ignored):
    paths below `directory` relative to it, as git lists them; None when `directory` is not
    in a git work tree (or git is not installed). Entries that end in "/" are directories git
    lists whole: nested repositories and submodules among the untracked ones, folders among
    the ignored ones."""
    if os.environ.get("ROCMLINT_NO_GIT"):
        return None
    inside = _git(directory, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != b"true":
        return None
    prefix = _git(directory, "rev-parse", "--show-prefix")
    tracked = _git(directory, "ls-files", "-z", "--cached", "--full-name", ".")
    if prefix is None or tracked is None:
        return None
    below = os.fsdecode(prefix.strip())
    names = lambda output: [os.fsdecode(item) for item in output.split(b"\0") if item]  # noqa: E731
    tracked_names = [name[len(below) :] for name in names(tracked) if name.startswith(below)]
    if _git(directory, "check-ignore", "-q", ".") is not None:
        return tracked_names, [], [], True
    untracked = _git(directory, "ls-files", "-z", "--others", "--exclude-standard", ".")
    ignored = _git(directory, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", ".")
    if untracked is None or ignored is None:
        return None
    return tracked_names, names(untracked), names(ignored), False


def _from_git(walk: _Walk, top: str, listed: tuple[list[str], list[str], list[str], bool]) -> None:
    tracked, untracked, ignored, _ = listed
    folders: dict[str, str | None] = {}

    def folder_reason(relative_dir: str, tracked_file: bool) -> str | None:
        """Why a folder (relative to top, "" for top) is left out, if it is. For tracked
        files only the user's `exclude` patterns count; for untracked files also the
        folders rocmlint leaves out by default (environments, caches, build output)."""
        key = (relative_dir, tracked_file)
        if key in folders:
            return folders[key]
        reason = None
        if relative_dir:
            parent, _, name = relative_dir.rpartition("/")
            reason = folder_reason(parent, tracked_file)
            if reason is None:
                path = os.path.join(top, relative_dir)
                own = walk.excludes.reason(path, True)
                if own is None and not tracked_file:
                    own = _default_excluded(name, path)
                if own is not None:
                    if (relative_dir, not tracked_file) not in folders or folders[(relative_dir, not tracked_file)] is None:
                        walk.found.left_out.append(Problem(_display(path) + "/", own))
                    reason = "in a folder left out"
        folders[key] = reason
        return reason

    entries = sorted({(name, True) for name in tracked} | {(name, False) for name in untracked})
    for relative, is_tracked in entries:
        if not is_tracked and OWN_CACHE_DIR in relative.split("/")[:-1]:
            continue
        path = os.path.join(top, relative)
        mode = None
        if is_tracked and not relative.endswith("/"):
            try:
                mode = os.lstat(path).st_mode
            except (OSError, ValueError):
                pass
        if relative.endswith("/") or (mode is not None and stat.S_ISDIR(mode)):
            # A nested repository or a submodule: a work tree of its own.
            nested = path.rstrip("/")
            if folder_reason(relative.rstrip("/"), False) is None:
                _directory(nested, walk.excludes, walk.languages, walk.seen, walk.found)
            continue
        language = walk.wanted_language(os.path.basename(relative))
        if language is None or folder_reason(os.path.dirname(relative), is_tracked) is not None:
            continue
        walk.file(path, language, tracked=is_tracked, mode=mode)
    for relative in ignored:
        name = relative.rstrip("/")
        if not name or name == "." or OWN_CACHE_DIR in name.split("/")[:-1] or (relative.endswith("/") and name.split("/")[-1] == OWN_CACHE_DIR):
            continue
        if relative.endswith("/") or walk.wanted_language(os.path.basename(name)) is not None:
            shown = _display(os.path.join(top, name)) + ("/" if relative.endswith("/") else "")
            walk.found.left_out.append(Problem(shown, "ignored by git (.gitignore, .git/info/exclude or core.excludesFile)"))
