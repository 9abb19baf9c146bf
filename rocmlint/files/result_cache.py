"""Per-file results kept between scans, so that a re-scan reads only what changed.

What is kept is the per-file pass of one file: its hits, gated ones included, and its problems
(a syntax error, a file too deeply nested to parse). The project pass (rocmlint.project) is
never kept: it runs on every scan, on kept and fresh hits alike.

An entry is found by a key made of everything the per-file pass reads:
- the file's bytes (a hash of them), its path as shown and its absolute path, its language;
- the checks that run (each check's whole definition, in order) and the GPU target
  (`rocm-version`, `arch`), from the configuration and the command line;
- whether its C/C++ directives are collected for a project pass (they are not kept: the
  project pass reads them itself for a file whose result was kept);
- rocmlint itself: its version, the size and modification time of each of its modules
  (a changed rocmlint never reads old results), the Python version (`ast` differs between
  versions) and the ast-grep version (the C/C++ parser).
The per-file pass of a Python file also asks questions about other files: whether a module
sits in a package named for one GPU stack, whether an import names a module of the same
source tree, whether a name it imports from there is a platform predicate. Those answers are
kept with the entry (the functions marked `external_input`), and the entry is used only
when every question, asked again, gets the same answer. So an edit to an imported module,
a new `__init__.py` or a moved file makes the entry stale, without any list of dependencies
kept by hand.

Entries are JSON files (never pickle: a cache directory someone else can write to must not be
able to run code), written to a temporary file and renamed into place, so a reader sees a
whole entry or none. An entry that cannot be read or does not have the expected shape is a
miss, never an error; a cache directory that cannot be written is a cache that keeps nothing.
Files whose per-file pass had nothing to do (no check's marker in them) get no entry of their
own: their keys are listed together in one file (`unmarked.json`), read once per process, so
that a re-scan neither decodes nor searches them again.

A kept result decides what a scan reports, so it must never come from the tree being scanned:
anyone with the same rocmlint can compute the keys, and a checkout could carry entries with no
findings in them. Results are kept in the user's cache folder by default, one folder per scan
root (default_directory), and a folder that git tracks files in, or that belongs to another
user, is never used, whoever named it (refusal). Inside the folder only regular files of the
user's are read, never through a symbolic link and never more than _MAX_KEPT_BYTES of one; a
named pipe or a device put there is not waited on, and nothing is written through a link.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import sys
from pathlib import Path
from typing import Callable, Sequence

from rocmlint import __version__
from rocmlint.findings import SEVERITIES, Edit, Finding, Fix, Problem

ENVIRONMENT_VARIABLE = "ROCMLINT_CACHE_DIR"
_FORMAT = 1
_UNMARKED = "unmarked.json"
# A kept file longer than this is not read (a miss): far above any real key list.
_MAX_KEPT_BYTES = 64 << 20
# One file's entry longer than this is neither written nor read: a result that large (tens of
# thousands of findings in one file) costs little to compute again.
_MAX_ENTRY_BYTES = 16 << 20
# The cache directory tag (https://bford.info/cachedir/): backup tools pass the folder over.
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file marks a cache folder of rocmlint (per-file results kept between scans).\n"
    "# It can be deleted at any time. See https://bford.info/cachedir/ for what this file is.\n"
)
# Keys of files that changed or went away are never taken out; past this many the list
# starts again from one scan's keys.
_UNMARKED_LIMIT = 500_000

# --- questions about other files --------------------------------------------------------------

_EXTERNAL: dict[str, Callable] = {}
_recording: list | None = None
_nesting = 0


def external_input(function: Callable) -> Callable:
    """Mark a function whose answer depends on files other than the one being checked. While
    a file's per-file pass is recorded, each outermost call and its answer are kept, so that a
    kept result can be checked against the files as they are now. Positional arguments of
    JSON types only; the answer must be JSON too (str, bool, None)."""
    name = f"{function.__module__}:{function.__qualname__}"
    _EXTERNAL[name] = function

    @functools.wraps(function)
    def recorded(*args):
        global _nesting
        if _recording is None:
            return function(*args)
        _nesting += 1
        try:
            answer = function(*args)
        finally:
            _nesting -= 1
        if _nesting == 0:
            _recording.append([name, list(args), answer])
        return answer

    return recorded


def record_questions() -> list:
    """Start keeping the questions of one file's per-file pass; returns the list they go to."""
    global _recording, _nesting
    _recording, _nesting = [], 0
    return _recording


def stop_recording() -> None:
    global _recording
    _recording = None


def _external(name: str) -> Callable | None:
    """The function a kept question names. Its module registers it when imported, and a warm
    scan may read kept results before anything has imported it: then it is imported here (one
    of rocmlint's own modules only), or every first kept result with a question in a process
    was taken for stale."""
    function = _EXTERNAL.get(name)
    module = name.partition(":")[0]
    if function is None and module.startswith("rocmlint.") and module not in sys.modules:
        import importlib

        try:
            importlib.import_module(module)
        except ImportError:
            return None
        function = _EXTERNAL.get(name)
    return function


def _answers_hold(questions: list) -> bool:
    for name, args, answer in questions:
        function = _external(name)
        if function is None or function(*args) != answer:
            return False
    return True


# --- the key ----------------------------------------------------------------------------------


def _stat_lines(folder: str, suffix: str = "") -> list[str]:
    """Name, size and modification time of every file under `folder` whose name ends with
    `suffix`, sorted (compiled-code folders left out)."""
    lines = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(files):
            if not name.endswith(suffix):
                continue
            stat = os.stat(os.path.join(root, name))
            lines.append(f"{os.path.relpath(os.path.join(root, name), folder)}|{stat.st_size}|{stat.st_mtime_ns}\n")
    return lines


@functools.lru_cache(maxsize=1)
def _rocmlint_stamp() -> str:
    """rocmlint's own code as it is on disk (size and modification time of each module), the
    Python version and ast-grep's package as it is on disk (a new build or version of it is a
    new stamp). The checks are in every key whole (scan_salt)."""
    import hashlib
    import importlib.util

    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{__version__}|{sys.version_info[:3]}".encode())
    package = Path(__file__).resolve().parent
    for line in _stat_lines(str(package), ".py"):
        digest.update(line.encode())
    # Its files rather than its version from the package metadata: importlib.metadata costs
    # more to import than the rest of a one-file scan's key.
    try:
        spec = importlib.util.find_spec("ast_grep_py")
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
    except (ImportError, ValueError):
        locations = []
    for folder in locations:
        digest.update(f"ast-grep-py {folder}\n".encode())
        for line in _stat_lines(folder):
            digest.update(line.encode())
    if not locations:  # an unknown ast-grep only makes the key stricter
        digest.update(b"ast-grep-py ?")
    return digest.hexdigest()


def scan_salt(checks: Sequence, gpu_target) -> str:
    """The part of every key that one scan shares: rocmlint, the checks and the target."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    digest.update(_rocmlint_stamp().encode())
    for check in checks:
        digest.update(repr(check).encode())
    digest.update(repr(gpu_target).encode())
    return digest.hexdigest()


def write_by_rename(target: str, text: str, prefix: str, suffix: str = ".json") -> None:
    """Write a kept file whole or not at all: into a temporary file beside it, renamed over it,
    so that a reader never sees half a file (a scan stopped mid-write, two scans at once). No
    fsync: a kept file lost in a crash only costs the time to make it again. Nothing is written
    through a symbolic link: the temporary file is created new, and a rename replaces a link
    at `target` rather than following it."""
    import tempfile

    descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def _read_kept(path: str, limit: int = _MAX_KEPT_BYTES) -> bytes | None:
    """The bytes of a file in the cache folder, or None: only a regular file that belongs to
    the user, never one reached through a symbolic link, at most `limit` bytes. Opened
    without blocking and checked on the open descriptor, so a named pipe or a device in its
    place is never waited on nor read."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None  # missing, a link (O_NOFOLLOW), unreadable
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit or not _own(info):
            return None
        chunks, total = [], 0
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                return None
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _own(info: os.stat_result) -> bool:
    """Whether a file or folder belongs to the user rocmlint runs as (always, where the system
    has no owners)."""
    return not hasattr(os, "geteuid") or info.st_uid == os.geteuid()


def _is_folder(path: str) -> bool:
    """A real folder, not a symbolic link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


class ResultCache:
    """Kept per-file results under `directory` (created on first write). A directory that must
    not be trusted (refusal) is a cache that keeps nothing."""

    def __init__(self, directory: str | os.PathLike, salt: str):
        self.directory = os.path.abspath(directory)
        self.salt = salt
        self.refused = refusal(self.directory)
        self._writable = self.refused is None
        self._unmarked: frozenset[str] | None = None  # read on first use
        self.new_unmarked: list[str] = []  # found in this process, for save_unmarked

    def unmarked(self, key: str) -> bool:
        """Whether an earlier scan found that the file of this key holds no marker of any
        check that runs (the key covers the file's bytes, its path and the checks)."""
        if self._unmarked is None:
            self._unmarked = self._read_unmarked()
        return key in self._unmarked

    def note_unmarked(self, key: str) -> None:
        self.new_unmarked.append(key)

    def _read_unmarked(self) -> frozenset[str]:
        if self.refused is not None:
            return frozenset()
        try:
            data = _read_kept(os.path.join(self.directory, _UNMARKED))
            keys = json.loads(data) if data is not None else None
            if isinstance(keys, list) and all(isinstance(k, str) for k in keys):
                return frozenset(keys)
        except Exception:  # noqa: BLE001 - a missing or damaged list is an empty one
            pass
        return frozenset()

    def save_unmarked(self, keys: Sequence[str]) -> None:
        """Add one scan's unmarked keys to the kept list (by the process that runs the scan,
        once, after its workers are done)."""
        if not keys or not self._writable:
            return
        known = self._read_unmarked()
        merged = known.union(keys)
        if len(merged) == len(known):
            return
        if len(merged) > _UNMARKED_LIMIT:
            merged = frozenset(keys)
        try:
            self._prepare()
            write_by_rename(os.path.join(self.directory, _UNMARKED), json.dumps(sorted(merged)), prefix=".tmp-")
        except OSError:
            self._writable = False

    def key(self, path: str, language: str, data: bytes, collect_directives: bool) -> str:
        import hashlib  # here, as in scan_salt: a scan without a cache never needs it

        digest = hashlib.blake2b(data, digest_size=20)
        # Paths as the file system's bytes: a name that is not UTF-8 is still a name.
        digest.update(b"\0".join([b"", self.salt.encode(), os.fsencode(path), os.fsencode(os.path.abspath(path)), language.encode(), b"%d" % collect_directives]))
        return digest.hexdigest()

    def _entry_path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key[2:] + ".json")

    def get(self, key: str) -> tuple[list[Finding], list[Problem]] | None:
        """The kept result, or None: missing, unreadable, of another shape, or stale."""
        if self.refused is not None:
            return None
        path = self._entry_path(key)
        if not _is_folder(os.path.dirname(path)):
            return None  # no entries yet, or a link put in the folder's place
        try:
            data = _read_kept(path, _MAX_ENTRY_BYTES)
            if data is None:
                return None
            entry = json.loads(data)
            if not _is_entry(entry) or not _answers_hold(entry["questions"]):
                return None
            return [_finding(f) for f in entry["findings"]], [Problem(*p) for p in entry["problems"]]
        except Exception:  # noqa: BLE001 - a damaged entry is a miss, whatever is wrong with it
            return None

    def put(self, key: str, questions: list, findings: list[Finding], problems: list[Problem]) -> None:
        if not self._writable:
            return
        entry = {
            "format": _FORMAT,
            "questions": questions,
            "findings": [_finding_json(f) for f in findings],
            "problems": [[p.path, p.reason, p.line, p.internal] for p in problems],
        }
        try:
            encoded = json.dumps(entry, separators=(",", ":"))
        except (TypeError, ValueError):
            return  # an answer JSON cannot hold: this file's result is not kept, the others are
        if len(encoded) > _MAX_ENTRY_BYTES:
            return  # not read back either
        target = self._entry_path(key)
        try:
            folder = os.path.dirname(target)
            if not _is_folder(folder):
                if os.path.lexists(folder):
                    return  # something else in the folder's place (a link): this entry is not kept
                self._prepare()
                os.makedirs(folder, exist_ok=True)
            write_by_rename(target, encoded, prefix=".tmp-")
        except OSError:
            self._writable = False  # a read-only place or a full disk: keep nothing, say nothing

    def _prepare(self) -> None:
        """Create the directory with a .gitignore that ignores it whole (git, and so rocmlint's
        discovery, never list it) and a cache directory tag that says what it is. Each is written
        by rename where nothing of that name is there (a link there is left alone, never
        followed)."""
        os.makedirs(self.directory, exist_ok=True)
        marks = {
            ".gitignore": "# Created by rocmlint: results kept between scans (safe to delete).\n*\n",
            "CACHEDIR.TAG": _CACHEDIR_TAG,
        }
        for name, text in marks.items():
            path = os.path.join(self.directory, name)
            if not os.path.lexists(path):
                write_by_rename(path, text, prefix=".tmp-", suffix="")


# --- the shape of an entry ------------------------------------------------------------------
# Read back exactly as written: every field of the type `put` writes, or the entry is a miss.
# A field of another type (a number for a path, a string for a line) would fail far from here,
# in a sort or a report, and a kept result must never be able to stop a scan.


def _is_int(value) -> bool:
    return type(value) is int  # bool is an int subclass, and never a line or a column


def _is_optional_str(value) -> bool:
    return value is None or type(value) is str


def _is_entry(entry) -> bool:
    return (
        type(entry) is dict
        and _is_int(entry.get("format")) and entry["format"] == _FORMAT
        and type(entry.get("questions")) is list and all(_is_question(q) for q in entry["questions"])
        and type(entry.get("findings")) is list and all(_is_finding(f) for f in entry["findings"])
        and type(entry.get("problems")) is list and all(_is_problem(p) for p in entry["problems"])
    )


def _is_plain(value, depth: int = 0) -> bool:
    """A JSON scalar, or a list of them (a few levels deep): what external_input functions
    take and answer."""
    if value is None or type(value) in (str, bool, int, float):
        return True
    return type(value) is list and depth < 4 and all(_is_plain(v, depth + 1) for v in value)


def _is_question(item) -> bool:
    """[function name, its arguments, its answer]."""
    return (
        type(item) is list and len(item) == 3 and type(item[0]) is str and type(item[1]) is list
        and all(_is_plain(a) for a in item[1]) and _is_plain(item[2])
    )


def _is_problem(item) -> bool:
    return (
        type(item) is list and len(item) == 4 and type(item[0]) is str and type(item[1]) is str
        and (item[2] is None or _is_int(item[2])) and type(item[3]) is bool
    )


def _is_finding(item) -> bool:
    if type(item) is not list or len(item) != 12:
        return False
    path, check_id, message, severity, line, col, end_line, end_col, fix_json, gate, gate_fixed, context = item
    return (
        type(path) is str and type(check_id) is str and type(message) is str and severity in SEVERITIES
        and all(_is_int(n) for n in (line, col, end_line, end_col))
        and (fix_json is None or _is_fix(fix_json)) and _is_optional_str(gate) and type(gate_fixed) is bool
        and type(context) is list
        and all(type(c) is list and len(c) == 2 and _is_int(c[0]) and type(c[1]) is str for c in context)
    )


def _is_fix(item) -> bool:
    return (
        type(item) is list and len(item) == 3 and type(item[0]) is str and item[1] in ("safe", "unsafe")
        and type(item[2]) is list
        and all(
            type(e) is list and len(e) == 7 and type(e[2]) is str and all(_is_int(e[i]) for i in (0, 1, 3, 4, 5, 6))
            for e in item[2]
        )
    )


def _finding_json(finding: Finding) -> list:
    fix = finding.fix
    fix_json = None
    if fix is not None:
        fix_json = [fix.title, fix.safety, [[e.start, e.end, e.replacement, e.start_line, e.start_col, e.end_line, e.end_col] for e in fix.edits]]
    return [
        finding.path, finding.check_id, finding.message, finding.severity, finding.line, finding.col,
        finding.end_line, finding.end_col, fix_json, finding.gate, finding.gate_fixed,
        [[line, text] for line, text in finding.context.items()],
    ]


def _finding(item: list) -> Finding:
    path, check_id, message, severity, line, col, end_line, end_col, fix_json, gate, gate_fixed, context = item
    fix = None
    if fix_json is not None:
        title, safety, edits = fix_json
        fix = Fix(title, safety, tuple(Edit(*e) for e in edits))
    return Finding(
        path=path, check_id=check_id, message=message, severity=severity, line=line, col=col, end_line=end_line,
        end_col=end_col, fix=fix, gate=gate, gate_fixed=gate_fixed, context={int(n): text for n, text in context},
    )


# --- where results are kept -----------------------------------------------------------------


def user_cache_folder() -> str | None:
    """$XDG_CACHE_HOME, else ~/.cache (a relative $XDG_CACHE_HOME is not used, as the XDG base
    directory specification says); None without a home folder."""
    folder = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(folder):
        return folder
    home = os.path.expanduser("~")
    return os.path.join(home, ".cache") if os.path.isabs(home) else None


def default_directory(root: Path) -> Path | None:
    """Where results are kept: $ROCMLINT_CACHE_DIR, else a folder of the user's cache folder
    (`rocmlint/results/`) named by a hash of the real path of `root`, the scan root, so that
    projects do not evict each other's results; None when there is no user cache folder."""
    configured = os.environ.get(ENVIRONMENT_VARIABLE)
    if configured:
        return Path(configured)
    folder = user_cache_folder()
    if folder is None:
        return None
    import hashlib

    name = hashlib.blake2b(os.fsencode(os.path.realpath(root)), digest_size=12).hexdigest()
    return Path(folder, "rocmlint", "results", name)


@functools.lru_cache(maxsize=16)
def refusal(directory: str) -> str | None:
    """Why results must not be kept in `directory`, or None. Results kept where the scanned
    tree can supply them would let it choose its own verdict: a folder that git tracks files
    in (a checkout holds those files) or that belongs to another user is never used."""
    real = os.path.realpath(directory)
    try:
        info = os.stat(real)
    except (OSError, ValueError):
        return None  # not there yet: it is created, the user's, on the first write
    if stat.S_ISDIR(info.st_mode) and not _own(info):
        return "it belongs to another user"
    if stat.S_ISDIR(info.st_mode):
        return _git_refusal(real)
    return None  # not a folder: nothing is read from it, and writing fails (keeps nothing)


def _git_refusal(folder: str) -> str | None:
    """Why not `folder` (a real path to a folder), as far as git is concerned: git tracks files
    in it, or it is in a work tree and git cannot say. Git is asked only when a folder at or
    above it has a `.git`."""
    current = folder
    while not os.path.lexists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return None  # in no git work tree
        current = parent
    import subprocess  # here: only a cache folder inside a work tree runs git

    def git(*arguments: str) -> bytes | None:
        try:
            completed = subprocess.run(
                ["git", "-C", folder, *arguments], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, timeout=120, check=False,
            )
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
        return completed.stdout if completed.returncode == 0 else None

    listed = git("ls-files", "-z", "--cached", "--", ".")
    if listed is not None:
        return "git tracks files in it" if listed.strip(b"\0") else None
    if (git("rev-parse", "--is-inside-git-dir") or b"").strip() == b"true":
        return None  # inside a .git folder: git tracks nothing there
    return "it is inside a git work tree and git cannot say whether it tracks files in it"
